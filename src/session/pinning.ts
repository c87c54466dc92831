/**
 * Pinning on a session's list and call paths (governance/: the judgement; here: when it runs).
 * Every path to a target passes through its session's member: a single-target session's list
 * answers (single.ts), an aggregate's list pages (aggregate-lists.ts), both flavours' routing of a
 * call, and the member's notifications (core.ts). The server path, the aggregate, groups,
 * WebSocket, legacy SSE and the sessions held for 2026 requests are all such sessions.
 *
 * A call naming an item its connection has not listed since it last changed (a new session, a
 * restart, a `list_changed`) reads that list first: the call is judged on the definition the
 * upstream that runs it holds now.
 */
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from '../jsonrpc/types.ts';
import { PIN_KINDS, pinKindOf, type PinKind } from '../governance/canonical.ts';
import { hasSkills } from '../router/skills.ts';
import { askMember } from './ask-member.ts';
import type { Member } from './member.ts';

/** A full re-read stops after this many pages (the same bound as the aggregate's name refresh). */
const MAX_PAGES = 100;

/** The requests pinning judges: the kind of item each names, and the param naming it. */
const CALL_KINDS: Readonly<Record<string, readonly [PinKind, 'name' | 'uri']>> = {
  'tools/call': ['tool', 'name'],
  'prompts/get': ['prompt', 'name'],
  'skills/get': ['skill', 'uri'],
};
const CHANGED_KINDS: Readonly<Record<string, readonly PinKind[]>> = {
  'notifications/tools/list_changed': ['tool'],
  'notifications/prompts/list_changed': ['prompt'],
  // A skill's files are resources (SEP-2640): a change of them is a change of the resource list.
  'notifications/resources/list_changed': ['resourceTemplate', 'skill'],
};
/** Whether the member offers the list of `kind` (skills: SEP-2640's extension). */
const OFFERS: Readonly<Record<PinKind, (member: Member) => boolean>> = {
  tool: (m) => m.capabilities?.tools !== undefined,
  prompt: (m) => m.capabilities?.prompts !== undefined,
  resourceTemplate: (m) => m.capabilities?.resources !== undefined,
  skill: (m) => hasSkills(m.capabilities),
};

/** Re-reads in flight, per connection and kind: a burst of list_changed costs one read at a time. */
const reading = new WeakMap<object, Partial<Record<PinKind, Promise<void>>>>();

/** Reads every page of `kind` from the member's upstream and judges it (first sights pinned, changes noted). */
export function relist(member: Member, kind: PinKind): Promise<void> {
  return member.connect().then((connection) => {
    const gate = member.pins;
    if (gate === undefined || !OFFERS[kind](member)) return;
    let running = reading.get(connection);
    if (running === undefined) reading.set(connection, (running = {}));
    const busy = running[kind];
    if (busy !== undefined) return busy;
    const read = (async () => {
      let cursor: string | undefined;
      let incomplete = `still a cursor after ${MAX_PAGES} pages`;
      try {
        for (let i = 0; i < MAX_PAGES; i++) {
          incomplete = `page ${i + 1} failed`;
          const page = await askMember(member, PIN_KINDS[kind].method, cursor === undefined ? {} : { cursor });
          gate.judge(connection, kind, page);
          cursor = typeof page.nextCursor === 'string' && page.nextCursor !== '' ? page.nextCursor : undefined;
          incomplete = cursor === undefined ? '' : `still a cursor after ${MAX_PAGES} pages`;
          if (cursor === undefined) return;
        }
      } catch (err) {
        incomplete += `: ${err instanceof Error ? ((err as { code?: string }).code ?? err.message) : String(err)}`;
        throw err;
      } finally {
        // Sealed after the first read whatever its outcome: the server being guarded must not keep
        // its list open (an error on page 2, a cursor on every page) so that a later addition
        // passes as a first sight. What a cut-short read missed waits for approval (logged).
        gate.seal(kind, incomplete === '' ? undefined : incomplete);
      }
    })().finally(() => {
      delete (running as Partial<Record<PinKind, Promise<void>>>)[kind];
    });
    return (running[kind] = read);
  });
}

/**
 * Judges a call before it is forwarded: undefined when it may go now, a promise when its list must
 * be read first (it rejects with GW_DEFINITION_CHANGED, as does a throw here). `request` names the
 * item as the server does (an aggregate has restored the name).
 */
export function checkCall(member: Member, request: JsonRpcRequest): Promise<void> | undefined {
  const gate = member.pins;
  const named = gate === undefined ? undefined : CALL_KINDS[request.method];
  const kind = named?.[0];
  const name = named === undefined ? undefined : request.params?.[named[1]];
  if (gate === undefined || kind === undefined || typeof name !== 'string') return undefined;
  const connection = member.connection;
  if (connection !== undefined) {
    const verdict = gate.check(connection, kind, name);
    if (verdict === undefined) return undefined;
    if (verdict !== 'unjudged') throw verdict;
  }
  return relist(member, kind).then(() => {
    const now = member.connection;
    const verdict = now === undefined ? undefined : gate.check(now, kind, name);
    // Still unjudged: no list shows the name; the upstream answers for a name it does not list.
    if (verdict !== undefined && verdict !== 'unjudged') throw verdict;
  });
}

/**
 * Judges one list page of the member's (`method`'s result) and returns the keys to withhold;
 * undefined when `method` is no pinned list. The first page of a kind never read whole starts a
 * whole read, which seals it (pins-file.ts): items first seen after that wait for approval.
 */
export function judgePage(member: Member, method: string, result: JsonObject): Set<string> | undefined {
  const gate = member.pins;
  const connection = member.connection;
  const kind = pinKindOf(method);
  if (gate === undefined || connection === undefined || kind === undefined) return undefined;
  const withheld = gate.judge(connection, kind, result);
  if (!gate.sealed(kind)) relist(member, kind).catch(() => undefined);
  return withheld;
}

/** Judges a list answer of the member's (`method`'s result), leaving out what is withheld. False when nothing was left out. */
export function withholdChanged(member: Member, method: string, result: JsonObject): boolean {
  const kind = pinKindOf(method);
  const withheld = judgePage(member, method, result);
  if (kind === undefined || withheld === undefined || withheld.size === 0) return false;
  const spec = PIN_KINDS[kind];
  const items = result[spec.resultKey];
  if (Array.isArray(items)) result[spec.resultKey] = items.filter((item) => !(typeof item === 'object' && item !== null && withheld.has((item as JsonObject)[spec.key] as string)));
  return true;
}

/**
 * A member's notification: a `list_changed` drops what its connection showed of that kind and
 * reads the list again at once, so a pending change is known (`/status`, the admin API) before
 * any client lists.
 */
export function pinNotification(member: Member, notification: JsonRpcNotification): void {
  const kinds = CHANGED_KINDS[notification.method];
  const connection = member.connection;
  if (kinds === undefined || connection === undefined || member.pins === undefined) return;
  for (const kind of kinds) {
    member.pins.forget(connection, kind);
    relist(member, kind).catch(() => undefined);
  }
}
