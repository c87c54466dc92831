/**
 * `skills/list` of an aggregate session (SEP-2640): one page from every member that declares the
 * skills extension and still has pages, merged in config order with the composite cursor, each
 * entry's URIs encoded per server (router/skills.ts) and checked against the member's resource
 * filter (its own filters and the caller's policy). A member that fails or is slow is left out and
 * named in `_meta`, as in the other lists (aggregate-lists.ts). Pinning judges each member's page:
 * a skill whose entry (frontmatter, files, digests) changed since it was approved is withheld.
 *
 * `skills/get` and `resources/directory/read` name one URI and are routed by it like a resource
 * read (aggregate-routing.ts); their answers are encoded in `encodeSkillAnswer`.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { fanOut } from '../router/fan-out.ts';
import { PASS_ALL } from '../router/glob.ts';
import { encodeDirectory, encodeSkill, hasSkills, mergeCacheHints, visibleSkill } from '../router/skills.ts';
import { askMember, META_UNAVAILABLE, type ListContext } from './aggregate-lists.ts';
import type { Member } from './member.ts';
import { judgePage } from './pinning.ts';

const METHOD = 'skills/list';

async function pageOf(ctx: ListContext, member: Member, cursor: string | undefined): Promise<JsonObject> {
  await member.connect();
  // A member without the extension has no skills; it is not asked (it would answer -32601).
  if (!hasSkills(member.capabilities)) return {};
  const timeouts = { ...member.target.timeouts, requestMs: Math.min(ctx.listTimeoutMs, member.target.timeouts.requestMs) };
  const page = await askMember(member, METHOD, cursor === undefined ? {} : { cursor }, timeouts);
  const withheld = member.pins === undefined ? undefined : judgePage(member, METHOD, page);
  if (withheld !== undefined && withheld.size > 0 && Array.isArray(page.skills)) {
    page.skills = page.skills.filter((entry) => !isObject(entry) || typeof entry.uri !== 'string' || !withheld.has(entry.uri));
  }
  return page;
}

/** One merged page of `skills/list` (the `result` object). */
export async function listSkills(ctx: ListContext, params: JsonObject | undefined): Promise<JsonObject> {
  let state: Record<string, string | undefined>;
  const cursor = params?.cursor;
  if (cursor !== undefined) {
    const decoded = typeof cursor === 'string' ? ctx.cursors.decode(METHOD, cursor) : undefined;
    if (decoded === undefined) throw new GatewayError('GW_INVALID_CURSOR', 'Invalid cursor');
    state = { ...decoded };
  } else {
    state = Object.fromEntries(ctx.members().map((m) => [m.name, undefined]));
  }
  const names = Object.keys(state).filter((name) => ctx.member(name) !== undefined);
  const outcomes = await fanOut(names, (name) => pageOf(ctx, ctx.member(name) as Member, state[name]), ctx.listTimeoutMs);
  const skills: JsonObject[] = [];
  const next: Record<string, string> = {};
  const answered: JsonObject[] = [];
  const failed: Array<{ target: string; reason: string }> = [];
  let filtered = false;
  for (const outcome of outcomes) {
    if (!outcome.ok) {
      failed.push({ target: outcome.target, reason: outcome.reason });
      continue;
    }
    const member = ctx.member(outcome.target) as Member;
    const allowed = member.exposure.resources;
    if (allowed !== PASS_ALL) filtered = true;
    if (Array.isArray(outcome.value.skills)) {
      answered.push(outcome.value);
      for (const entry of outcome.value.skills as unknown[]) {
        if (!isObject(entry) || !visibleSkill(entry, allowed)) continue;
        encodeSkill(member.name, entry);
        skills.push(entry);
      }
    }
    const more = outcome.value.nextCursor;
    if (typeof more === 'string' && more !== '') next[outcome.target] = more;
  }
  const result: JsonObject = { skills, ...mergeCacheHints(answered, filtered) };
  if (Object.keys(next).length > 0) result.nextCursor = ctx.cursors.encode(METHOD, next);
  if (failed.length > 0) {
    ctx.logger.warn({ method: METHOD, failed }, 'targets left out of a merged list');
    ctx.leftOut(failed.map((f) => f.target));
    result._meta = { [META_UNAVAILABLE]: failed };
  }
  return result;
}

/**
 * A member's answer to `skills/get` or `resources/directory/read`, in place: its URIs encoded, what
 * the member's resource filter hides left out (a hidden skill reads as an unknown one), and the
 * cache made private when a filter applies. False when `method` is neither.
 */
export function encodeSkillAnswer(method: string, member: Member, result: JsonObject): boolean {
  const allowed = member.exposure.resources;
  if (method === 'skills/get') {
    const entry = result.skill;
    if (isObject(entry)) {
      if (!visibleSkill(entry, allowed)) throw new GatewayError('GW_RESOURCE_NOT_FOUND', 'Resource not found');
      encodeSkill(member.name, entry);
    }
  } else if (method === 'resources/directory/read') {
    encodeDirectory(member.name, result, allowed);
  } else {
    return false;
  }
  if (allowed !== PASS_ALL) result.cacheScope = 'private';
  return true;
}
