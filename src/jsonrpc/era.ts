/**
 * Which era an inbound POST belongs to, decided once per message from its body and headers, and the
 * checks the 2026-07-28 revision asks of every request (SEP-2575 stateless MCP, SEP-2243 standard
 * headers). Pure: no I/O, no gateway types; a rejection names the catalog code the route answers with.
 *
 * The order is the one the spec's ladder gives (and the TypeScript SDK v2 follows): the body's
 * per-request envelope (`_meta["io.modelcontextprotocol/protocolVersion"]`) is what makes a request
 * modern; a modern `MCP-Protocol-Version` header without that claim is a broken envelope (-32602); the
 * header must equal the claim (-32020). `initialize` stays the 2025 handshake unless it carries a
 * valid modern claim (then it is a removed method, -32601).
 */
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from './types.ts';

/** The stateless revision, and every modern revision this gateway serves (newest first). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([MODERN_PROTOCOL_VERSION]);

/** Reserved `_meta` keys of the 2026 envelope and of its results and notifications. */
export const META = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
});
const RESERVED_PREFIX = 'io.modelcontextprotocol/';

/** 2025 methods the 2026 revision removed: a 2026 client gets 404 / -32601 for them. */
export const REMOVED_IN_2026: ReadonlySet<string> = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

/** Methods whose body field the `Mcp-Name` header mirrors (SEP-2243). */
const NAME_SOURCE: Readonly<Record<string, string>> = Object.freeze({ 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' });

/** The headers the classifier reads (Node's lower-cased header object fits). */
export type EraHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A refusal: the catalog code to answer with, its message, and public data. */
export interface EraRejection {
  readonly reject: 'GW_INVALID_ENVELOPE' | 'GW_HEADER_MISMATCH' | 'GW_INVALID_REQUEST' | 'GW_PROTOCOL_VERSION_NOT_SUPPORTED' | 'GW_METHOD_NOT_FOUND';
  readonly message: string;
  readonly data?: JsonObject;
}

export type Classified =
  | { readonly era: '2025' }
  | { readonly era: '2026'; readonly request: JsonRpcRequest; readonly meta: JsonObject; readonly version: string }
  | { readonly era: '2026'; readonly notification: JsonRpcNotification }
  | EraRejection;

const LEGACY: Classified = Object.freeze({ era: '2025' });

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const header = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value.trim() : Array.isArray(value) ? value[0]?.trim() : undefined;
const isModern = (version: string): boolean => version >= MODERN_PROTOCOL_VERSION;

function metaOf(params: unknown): JsonObject | undefined {
  const meta = isObj(params) ? params._meta : undefined;
  return isObj(meta) ? meta : undefined;
}

/** What is wrong with a 2026 envelope, or undefined when it is whole. */
function envelopeIssue(meta: JsonObject): string | undefined {
  if (typeof meta[META.protocolVersion] !== 'string') return `${META.protocolVersion}: expected a protocol version string`;
  if (!isObj(meta[META.clientCapabilities])) return `${META.clientCapabilities}: missing (an object is required)`;
  const info = meta[META.clientInfo];
  if (info !== undefined && (!isObj(info) || typeof info.name !== 'string' || typeof info.version !== 'string')) {
    return `${META.clientInfo}: expected { name, version }`;
  }
  const level = meta[META.logLevel];
  if (level !== undefined && typeof level !== 'string') return `${META.logLevel}: expected a string`;
  return undefined;
}

const mismatch = (message: string, headerValue: string, body: string): EraRejection => ({
  reject: 'GW_HEADER_MISMATCH',
  message: `Bad Request: the request headers and body disagree: ${message}`,
  data: { mismatch: { header: headerValue, body } },
});

/** Classifies one parsed POST body; a batch or a 2025 message is `2025` (the session path checks it). */
export function classifyPost(body: unknown, headers: EraHeaders): Classified {
  const version = header(headers['mcp-protocol-version']);
  if (Array.isArray(body)) {
    const modern = body.some((item) => isObj(item) && metaOf(item.params)?.[META.protocolVersion] !== undefined);
    return modern ? { reject: 'GW_INVALID_REQUEST', message: 'Invalid Request: a JSON-RPC batch may not carry 2026-07-28 requests' } : LEGACY;
  }
  if (!isObj(body) || typeof body.method !== 'string') return LEGACY;
  const meta = metaOf(body.params);
  const claimed = meta?.[META.protocolVersion];
  const headerModern = version !== undefined && isModern(version);
  if (!('id' in body)) {
    if (claimed === undefined && !headerModern) return LEGACY;
    if (claimed !== undefined && typeof claimed !== 'string') return { reject: 'GW_INVALID_ENVELOPE', message: `Invalid params: ${META.protocolVersion} must be a string` };
    if (version !== undefined && claimed !== undefined && version !== claimed) return mismatch(`the envelope names ${String(claimed)}, the header ${version}`, version, String(claimed));
    return { era: '2026', notification: body as unknown as JsonRpcNotification };
  }
  if (claimed === undefined) {
    if (!headerModern) return LEGACY;
    if (body.method === 'initialize') return mismatch('initialize (the 2025 handshake) sent with a 2026 MCP-Protocol-Version header', version, 'initialize');
    return { reject: 'GW_INVALID_ENVELOPE', message: `Invalid params: the MCP-Protocol-Version header names ${version}, but params._meta lacks the 2026 envelope`, data: { envelope: { missing: meta === undefined ? ['_meta'] : [META.protocolVersion] } } };
  }
  const issue = envelopeIssue(meta as JsonObject);
  if (issue !== undefined) return { reject: 'GW_INVALID_ENVELOPE', message: `Invalid params: invalid _meta envelope: ${issue}`, data: { envelope: issue } };
  const claim = claimed as string;
  // A claim of a 2025 revision is a 2025 message (its session rules apply), whatever else it says.
  if (!isModern(claim)) return LEGACY;
  if (version !== undefined && version !== claim) return mismatch(`the envelope names ${claim}, the MCP-Protocol-Version header ${version}`, version, claim);
  const method = header(headers['mcp-method']);
  if (method !== undefined && method !== body.method) return mismatch(`the body names method ${body.method}, the Mcp-Method header ${method}`, method, body.method);
  return { era: '2026', request: body as unknown as JsonRpcRequest, meta: meta as JsonObject, version: claim };
}

/**
 * The rungs after classification: the standard headers must be present and agree with the body,
 * and each `Mcp-Param-*` header with an argument (-32020), the revision must be one we serve (-32022), and the method must exist in 2026 (-32601).
 */
export function checkModernRequest(request: JsonRpcRequest, version: string, headers: EraHeaders): EraRejection | undefined {
  const versionHeader = header(headers['mcp-protocol-version']);
  if (versionHeader === undefined) return mismatch('the MCP-Protocol-Version header is required', '(missing)', version);
  if (header(headers['mcp-method']) === undefined) return mismatch('the Mcp-Method header is required', '(missing)', request.method);
  const field = Object.hasOwn(NAME_SOURCE, request.method) ? NAME_SOURCE[request.method] : undefined;
  if (field !== undefined) {
    const value = request.params?.[field];
    const name = header(headers['mcp-name']);
    if (typeof value === 'string') {
      if (name === undefined) return mismatch(`params.${field} is "${value}" but the Mcp-Name header is missing`, '(missing)', value);
      const decoded = decodeHeaderValue(name);
      if (decoded === undefined) return mismatch('the Mcp-Name header has an invalid =?base64?...?= value', name, value);
      if (decoded !== value) return mismatch(`params.${field} is "${value}" but the Mcp-Name header names "${decoded}"`, name, value);
    }
  }
  const param = checkParamHeaders(request, headers);
  if (param !== undefined) return param;
  if (!MODERN_PROTOCOL_VERSIONS.includes(version)) {
    return {
      reject: 'GW_PROTOCOL_VERSION_NOT_SUPPORTED',
      message: `Unsupported protocol version: ${version}`,
      data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version },
    };
  }
  if (REMOVED_IN_2026.has(request.method)) return { reject: 'GW_METHOD_NOT_FOUND', message: `Method not found: ${request.method} does not exist in ${version}` };
  return undefined;
}

const PARAM_PREFIX = 'mcp-param-';
/** Deepest `properties` chain an argument is looked for (as the upstream side declares them). */
const PARAM_DEPTH = 16;
/** A header value as it may arrive: visible ASCII, space and tab; anything else had to be base64. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/** The primitive arguments reachable through object keys (where `x-mcp-header` may mark one), as header text. */
function argumentTexts(node: unknown, depth: number, out: Set<string>): Set<string> {
  if (typeof node === 'string') out.add(node);
  else if (typeof node === 'boolean' || (typeof node === 'number' && Number.isFinite(node))) out.add(String(node));
  else if (isObj(node) && depth < PARAM_DEPTH) for (const value of Object.values(node)) argumentTexts(value, depth + 1, out);
  return out;
}

/**
 * `Mcp-Param-<Name>` headers (SEP-2243) mirror arguments the tool marks with `x-mcp-header`; an
 * intermediary may route on them, so one that disagrees with the body is refused (-32020): a value
 * with characters a header may not carry (RFC 9110 5.5; other text goes in the base64 form), a bad
 * `=?base64?...?=` form, or a value no argument of the call has (a different value, an absent
 * argument, a method without arguments). The entry does not know the tool's declarations, so an
 * omitted header is the upstream's to refuse. Costs nothing when no such header is present.
 */
function checkParamHeaders(request: JsonRpcRequest, headers: EraHeaders): EraRejection | undefined {
  let texts: Set<string> | undefined;
  for (const key in headers) {
    if (!key.startsWith(PARAM_PREFIX)) continue;
    const raw = header(headers[key]) ?? '';
    const name = `Mcp-Param-${key.slice(PARAM_PREFIX.length)}`;
    if (!FIELD_VALUE.test(raw)) return mismatch(`the ${name} header has characters a header value may not carry (send the =?base64?...?= form)`, name, '(invalid)');
    const value = decodeHeaderValue(raw);
    if (value === undefined) return mismatch(`the ${name} header has an invalid =?base64?...?= value`, raw, '(invalid)');
    texts ??= argumentTexts(request.method === 'tools/call' ? request.params?.arguments : undefined, 0, new Set());
    if (!texts.has(value)) return mismatch(`the ${name} header is "${value}" but no argument of the call has that value`, raw, '(absent)');
  }
  return undefined;
}

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value as sent (`Mcp-Name`, `Mcp-Param-*`): plain, or `=?base64?<utf-8 as base64>?=`; undefined if invalid. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith(BASE64_PREFIX) || !value.endsWith(BASE64_SUFFIX)) return value;
  const b64 = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  const bytes = Buffer.from(b64, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return text.includes('\uFFFD') ? undefined : text;
}

/**
 * A copy of `params` for a 2025 upstream: the 2026 envelope keys leave `_meta` (progressToken
 * stays), and the keys in `drop` leave `params`. Built in one pass without `delete`, which would
 * turn the copy into a slow dictionary object for the serialization that follows.
 */
export function withoutEnvelope(params: JsonObject | undefined, drop?: ReadonlySet<string>): JsonObject | undefined {
  const meta = metaOf(params);
  if (params === undefined || (meta === undefined && drop === undefined)) return params;
  const copy: JsonObject = {};
  for (const key of Object.keys(params)) {
    if (drop?.has(key) === true) continue;
    let value = params[key];
    if (key === '_meta' && meta !== undefined) {
      const kept: JsonObject = {};
      let any = false;
      for (const k of Object.keys(meta)) {
        if (k.startsWith(RESERVED_PREFIX)) continue;
        Object.defineProperty(kept, k, { value: meta[k], enumerable: true, writable: true, configurable: true });
        any = true;
      }
      if (!any) continue;
      value = kept;
    }
    // A peer's `__proto__` key is data, never the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    else copy[key] = value as JsonObject[string];
  }
  return copy;
}
