/**
 * Fan-out lists of an aggregate session: one page from every target that still has one, merged in
 * config order, paged with the composite cursor (router/cursor.ts). A target that cannot answer in
 * time is left out of the page and named in `_meta` instead of failing the whole list
 * (`switchboard/unavailable`); names kept out by a collision are named too (`switchboard/collisions`),
 * among them a server's item listed under a name an override gave to another (the override wins).
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Observer } from '../log/observer.ts';
import type { CursorCodec } from '../router/cursor.ts';
import { fanOut } from '../router/fan-out.ts';
import { LIST_KINDS, mergePage, type ListKind } from '../router/list-merge.ts';
import type { NameTable } from '../router/name-table.ts';
import type { Member } from './member.ts';
import { askMember } from './ask-member.ts';
import { judgePage } from './pinning.ts';

export { askMember };

/** Pages whose items pinning withholds (their keys), for the merge. */
const WITHHELD = new WeakMap<JsonObject, ReadonlySet<string>>();

export const META_UNAVAILABLE = 'switchboard/unavailable';
export const META_COLLISIONS = 'switchboard/collisions';
/** A full refresh (to route a name not seen in a list yet) reads at most this many pages per target. */
const MAX_REFRESH_PAGES = 100;

export interface ListContext {
  /** Members that take new work, in config order. */
  members(): readonly Member[];
  member(name: string): Member | undefined;
  readonly tables: { readonly tools: NameTable; readonly prompts: NameTable };
  readonly cursors: CursorCodec;
  readonly listTimeoutMs: number;
  /** Between prefix and name (to recognise a name of a target that is down). */
  readonly separator: string;
  /** A tool's bare name reaches the one member listing it (aggregate-routing.ts). */
  readonly bareNames: boolean;
  readonly logger: Logger;
  /** Hears each target's list page (the status page's tools per target). */
  readonly observer: Observer;
  /** Targets that a merged list had to leave out (a slow starter tells the client once it is up). */
  leftOut(targets: readonly string[]): void;
}

async function pageOf(ctx: ListContext, member: Member, kind: ListKind, cursor: string | undefined): Promise<JsonObject> {
  await member.connect();
  // A target that does not offer the feature contributes nothing, without being asked.
  if (member.capabilities?.[kind.capability] === undefined) return {};
  // The list deadline is also the request's: past it the correlator cancels upstream, so a hung
  // target does not collect one pending list per page for its whole request timeout.
  const timeouts = { ...member.target.timeouts, requestMs: Math.min(ctx.listTimeoutMs, member.target.timeouts.requestMs) };
  const page = await askMember(member, kind.method, cursor === undefined ? {} : { cursor }, timeouts);
  ctx.observer.listed(member.name, kind.method, page, cursor === undefined);
  // Pinning: withheld items stay known to the name table (a call gets the refusal naming the change) but leave the page.
  if (member.pins !== undefined) {
    const withheld = judgePage(member, kind.method, page);
    if (withheld !== undefined && withheld.size > 0) WITHHELD.set(page, withheld);
  }
  return page;
}

/** One merged page of `method` for the downstream (the `result` object). */
export async function listPage(ctx: ListContext, method: ListKind['method'], params: JsonObject | undefined): Promise<JsonObject> {
  const kind = LIST_KINDS[method];
  let state: Record<string, string | undefined>;
  const cursor = params?.cursor;
  if (cursor !== undefined) {
    const decoded = typeof cursor === 'string' ? ctx.cursors.decode(method, cursor) : undefined;
    if (decoded === undefined) throw new GatewayError('GW_INVALID_CURSOR', 'Invalid cursor');
    state = { ...decoded };
  } else {
    state = Object.fromEntries(ctx.members().map((m) => [m.name, undefined]));
  }
  // Targets removed by a reload since the cursor was issued are skipped.
  const names = Object.keys(state).filter((name) => ctx.member(name) !== undefined);
  const outcomes = await fanOut(names, (name) => pageOf(ctx, ctx.member(name) as Member, kind, state[name]), ctx.listTimeoutMs);
  const page = mergePage(kind, outcomes, (name) => (ctx.member(name) as Member).exposure, ctx.tables, (value) => WITHHELD.get(value));
  const result: JsonObject = { [kind.resultKey]: page.items };
  if (Object.keys(page.next).length > 0) result.nextCursor = ctx.cursors.encode(method, page.next);
  const meta: JsonObject = {};
  if (page.failed.length > 0) {
    ctx.logger.warn({ method, failed: page.failed }, 'targets left out of a merged list');
    ctx.leftOut(page.failed.map((f) => f.target));
    meta[META_UNAVAILABLE] = page.failed;
  }
  if (page.collisions.length > 0) {
    ctx.logger.error({ method, collisions: page.collisions }, 'names collide (without a prefix, or with a name an override gave); later items left out');
    meta[META_COLLISIONS] = page.collisions;
  }
  if (Object.keys(meta).length > 0) result._meta = meta;
  return result;
}

/**
 * Reads every page of tools/list or prompts/list from `members` (default: every target), so that the
 * name table knows their names: used when a call names something no list has shown in this session.
 */
export async function refreshNames(ctx: ListContext, method: 'tools/list' | 'prompts/list', members = ctx.members()): Promise<void> {
  const kind = LIST_KINDS[method];
  const pagesOf = async (member: Member): Promise<JsonObject[]> => {
    const pages: JsonObject[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < MAX_REFRESH_PAGES; i++) {
      const value = await pageOf(ctx, member, kind, cursor);
      pages.push(value);
      cursor = typeof value.nextCursor === 'string' && value.nextCursor !== '' ? value.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return pages;
  };
  const outcomes = await fanOut(members.map((m) => m.name), (name) => pagesOf(ctx.member(name) as Member), ctx.listTimeoutMs);
  // Fetched concurrently, merged in config order: who wins a bare-name collision is deterministic.
  for (const outcome of outcomes) {
    if (!outcome.ok) continue;
    const member = ctx.member(outcome.target);
    if (member === undefined) continue;
    for (const value of outcome.value) mergePage(kind, [{ target: member.name, ok: true, value }], () => member.exposure, ctx.tables);
  }
}
