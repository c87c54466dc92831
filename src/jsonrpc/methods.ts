/**
 * What the gateway knows of each MCP request method, in one table: what the request names (the
 * params field the 2026 `Mcp-Name` header mirrors, the audit line, the policy and the spans read),
 * whether it may ask the client something while it runs (sampling, elicitation, roots; in 2026 an
 * `input_required` result, SEP-2322), whether a client may cache its answer (SEP-2549), and which
 * revision removed it. A method not listed names nothing, asks nothing, is not cached, and exists
 * in every revision (an upstream may serve methods the gateway has never heard of).
 *
 * Pure data and lookups: one Map read per question, no allocation.
 */
import type { JsonObject } from './types.ts';
import { MODERN_PROTOCOL_VERSION } from './versions.ts';

/** What a request acts on: the params field holding it, and what kind of thing that is. */
export interface Subject {
  readonly field: 'name' | 'uri';
  /** Also the audit line's field for it (never `name`, which is the logger's own). */
  readonly kind: 'tool' | 'prompt' | 'uri';
}

export interface MethodFacts {
  /** What the request acts on; policy and exposure refuse what they hide, spans name it. */
  readonly subject?: Subject;
  /** Its end is an audit line (`logging.audit`): a use of what it names, not a watch of it. */
  readonly audited?: true;
  /** It may ask the client while it runs; in 2026 it may answer `input_required`. */
  readonly mayAsk?: true;
  /** A client may cache its answer (2026: `ttlMs` and `cacheScope` on the result). */
  readonly cacheable?: true;
  /** Its subject has no `Mcp-Name` header (SEP-2243 names the header's methods; later extensions' are not among them). */
  readonly unheaded?: true;
  /** The revision that removed it: a request of that revision or later gets -32601. */
  readonly removedIn?: string;
}

const TOOL: Subject = Object.freeze({ field: 'name', kind: 'tool' });
const PROMPT: Subject = Object.freeze({ field: 'name', kind: 'prompt' });
const RESOURCE: Subject = Object.freeze({ field: 'uri', kind: 'uri' });
const REMOVED_2026: MethodFacts = { removedIn: MODERN_PROTOCOL_VERSION };
const CACHED: MethodFacts = { cacheable: true };

const TABLE: Readonly<Record<string, MethodFacts>> = {
  'tools/call': { subject: TOOL, audited: true, mayAsk: true },
  'prompts/get': { subject: PROMPT, audited: true, mayAsk: true },
  'resources/read': { subject: RESOURCE, audited: true, mayAsk: true, cacheable: true },
  'tools/list': CACHED,
  'prompts/list': CACHED,
  'resources/list': CACHED,
  'resources/templates/list': CACHED,
  // SEP-2640 (skills): results carry ttlMs and cacheScope; a skill and a directory are named by a
  // resource URI, judged like a read's (filters, policy), but SEP-2243 gives them no Mcp-Name header.
  'skills/list': CACHED,
  'skills/get': { subject: RESOURCE, cacheable: true, unheaded: true },
  'resources/directory/read': { subject: RESOURCE, cacheable: true, unheaded: true },
  'resources/subscribe': { subject: RESOURCE, removedIn: MODERN_PROTOCOL_VERSION },
  'resources/unsubscribe': { subject: RESOURCE, removedIn: MODERN_PROTOCOL_VERSION },
  initialize: REMOVED_2026,
  ping: REMOVED_2026,
  'logging/setLevel': REMOVED_2026,
};

const METHODS: ReadonlyMap<string, MethodFacts> = new Map(Object.entries(TABLE).map(([method, facts]) => [method, Object.freeze(facts)]));
const NONE: MethodFacts = Object.freeze({});

/** Everything the table says of `method` (an empty record for one it does not list). */
export function methodFacts(method: string): MethodFacts {
  return METHODS.get(method) ?? NONE;
}

/** What a request of `method` acts on, if it names anything. */
export function subjectOf(method: string): Subject | undefined {
  return METHODS.get(method)?.subject;
}

/** The string a request names (its tool, prompt or resource URI); undefined if none or not a string. */
export function namedBy(method: string, params: JsonObject | undefined): string | undefined {
  const field = METHODS.get(method)?.subject?.field;
  const value = field === undefined ? undefined : params?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** Whether `method` no longer exists at `version` (a revision of either era). */
export function isRemovedAt(method: string, version: string): boolean {
  const removed = METHODS.get(method)?.removedIn;
  return removed !== undefined && version >= removed;
}

/**
 * The params field the 2026 `Mcp-Name` header mirrors for `method` (SEP-2243): the subject of a
 * method that exists in the modern revision (a removed one is refused before its headers matter).
 */
export function mcpNameField(method: string): 'name' | 'uri' | undefined {
  const facts = METHODS.get(method);
  return facts?.subject !== undefined && facts.removedIn === undefined && facts.unheaded !== true ? facts.subject.field : undefined;
}

/** Whether `method` may ask the client while it runs (SEP-2322: only these may answer input_required). */
export function mayAsk(method: string): boolean {
  return METHODS.get(method)?.mayAsk === true;
}

/** Whether a client may cache the answer to `method` (SEP-2549). */
export function isCacheable(method: string): boolean {
  return METHODS.get(method)?.cacheable === true;
}

/** Whether `method` gets an audit line (`logging.audit`). */
export function isAudited(method: string): boolean {
  return METHODS.get(method)?.audited === true;
}
