/**
 * Which target owns a request of an aggregate session, with the original name or URI restored in
 * place. A name hidden by a filter is refused exactly like a name nobody has (same code, same
 * message, no target named): a filter must not reveal what it hides.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { NameOwner } from '../router/name-table.ts';
import { serverName } from '../router/overrides.ts';
import { decodeResourceUri } from '../router/resource-uri.ts';
import { refreshNames, type ListContext } from './aggregate-lists.ts';
import type { Member } from './member.ts';

export interface Route {
  readonly member: Member;
}

const KINDS = {
  tools: { method: 'tools/list', code: 'GW_UNKNOWN_TOOL', word: 'tool' },
  prompts: { method: 'prompts/list', code: 'GW_UNKNOWN_PROMPT', word: 'prompt' },
} as const;

/** The member owning exposed `name`, refreshing the name table once if it is not known yet. */
async function byName(ctx: ListContext, kind: 'tools' | 'prompts', name: string): Promise<{ member: Member; owner: NameOwner }> {
  const spec = KINDS[kind];
  let owner = ctx.tables[kind].resolve(name);
  if (owner === undefined) {
    // Only targets that could own the name are asked (and so started): those whose prefix it
    // carries, and those exposing bare names. Keeps a call to one target from starting them all.
    // (A prefix so long that shortening cut into it matches no one: then every target is asked.)
    const candidates = ctx.members().filter((m) => m.exposure.prefix === '' || name.startsWith(`${m.exposure.prefix}${ctx.separator}`));
    await refreshNames(ctx, spec.method, candidates.length > 0 ? candidates : ctx.members());
    owner = ctx.tables[kind].resolve(name);
  }
  const member = owner === undefined ? undefined : ctx.member(owner.target);
  if (owner !== undefined && member !== undefined) {
    // The table holds the client's name (after overrides): the server's is restored here; the
    // chain's entrance judges every name it carries (chain/entrance.ts).
    const original = serverName(member.exposure.overrides, kind, owner.name);
    if (original !== undefined) return { member, owner: { target: owner.target, name: original } };
  }
  // A target that is down cannot list its names: recognise its prefix so the error names it.
  for (const m of ctx.members()) {
    if (m.failure !== undefined && m.exposure.prefix !== '' && name.startsWith(`${m.exposure.prefix}${ctx.separator}`)) throw m.failure;
  }
  throw new GatewayError(spec.code, `Unknown ${spec.word}: ${name}`);
}

/** The member an encoded URI names and its own URI (the chain's entrance judges it against the filters). */
function byUri(ctx: ListContext, encoded: string): { member: Member; uri: string } {
  const decoded = decodeResourceUri(encoded);
  const member = decoded === undefined ? undefined : ctx.member(decoded.target);
  if (decoded === undefined || member === undefined) {
    throw new GatewayError('GW_RESOURCE_NOT_FOUND', `Resource not found: ${encoded}`, { uri: encoded });
  }
  return { member, uri: decoded.uri };
}

function stringParam(params: JsonObject | undefined, key: string): string {
  const value = params?.[key];
  if (typeof value !== 'string') throw new GatewayError('GW_INVALID_PARAMS', `Invalid params: ${key} must be a string`);
  return value;
}

/** Resolves the owner of `request` and rewrites its params for that target. */
export async function resolveRoute(ctx: ListContext, request: JsonRpcRequest): Promise<Route> {
  const params = request.params;
  switch (request.method) {
    case 'tools/call':
    case 'prompts/get': {
      const kind = request.method === 'tools/call' ? 'tools' : 'prompts';
      const { member, owner } = await byName(ctx, kind, stringParam(params, 'name'));
      (params as JsonObject).name = owner.name;
      return { member };
    }
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe': {
      const { member, uri } = byUri(ctx, stringParam(params, 'uri'));
      (params as JsonObject).uri = uri;
      return { member };
    }
    case 'completion/complete': {
      const ref = params?.ref;
      if (!isObject(ref)) throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: ref must be an object');
      if (ref.type === 'ref/prompt') {
        const { member, owner } = await byName(ctx, 'prompts', stringParam(ref, 'name'));
        ref.name = owner.name;
        return { member };
      }
      if (ref.type === 'ref/resource') {
        const { member, uri } = byUri(ctx, stringParam(ref, 'uri'));
        ref.uri = uri;
        return { member };
      }
      throw new GatewayError('GW_INVALID_PARAMS', 'Invalid params: ref.type must be "ref/prompt" or "ref/resource"');
    }
    default:
      throw new GatewayError('GW_METHOD_NOT_FOUND', `Method not found: ${request.method}`);
  }
}

