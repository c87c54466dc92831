/**
 * Filters and overrides on a single-target endpoint, where names are the server's own (or its
 * overrides'): a request naming what a filter hides, or a name renamed away, is refused the way
 * servers answer a name they do not have (-32602 "Unknown tool: <name>", the spec's own example,
 * with no gateway code in `data` that would tell the two apart), a renamed name is restored to the
 * server's, and list answers leave hidden items out and show overridden ones. Pure functions.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { namedBy, subjectOf, type Subject } from '../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { PASS_ALL } from './glob.ts';
import { LIST_KINDS, type Exposure, type ListKind } from './list-merge.ts';
import { clientName, overrideItem, passesBoth, serverName } from './overrides.ts';

/** False when the exposure lets everything through unchanged (the pass-through then does no work for it). */
export function filters(exposure: Exposure): boolean {
  return exposure.tools !== PASS_ALL || exposure.prompts !== PASS_ALL || exposure.resources !== PASS_ALL || exposure.overrides !== undefined;
}

const hiddenName = (kind: 'tool' | 'prompt', name: string) =>
  new GatewayError(kind === 'tool' ? 'GW_UNKNOWN_TOOL' : 'GW_UNKNOWN_PROMPT', `Unknown ${kind}: ${name}`);
const hiddenUri = (uri: string) => new GatewayError('GW_RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });

/**
 * The error object a request naming something `exposure` hides gets: the catalog's code and message
 * for an unknown name or URI, without `data`. Undefined when nothing hidden is named; then a name
 * an override gave is replaced, in `request.params`, by the server's.
 */
export function hiddenNamed(request: JsonRpcRequest, exposure: Exposure): JsonRpcErrorObject | undefined {
  try {
    refuseHidden(request, exposure);
    return undefined;
  } catch (err) {
    const { code, message } = (err as GatewayError).toJsonRpc();
    return { code, message };
  }
}

/**
 * Throws what an unknown name or URI gets when `value`, a `kind` of thing, is hidden by `exposure`;
 * else returns the server's name for it (overrides.ts), or `value` itself.
 */
function refuseKind(kind: Subject['kind'], value: string, exposure: Exposure): string {
  if (kind === 'uri') {
    if (!exposure.resources(value)) throw hiddenUri(value);
    return value;
  }
  const plural = kind === 'tool' ? 'tools' : 'prompts';
  const original = serverName(exposure.overrides, plural, value);
  if (original === undefined || !passesBoth(exposure[plural], original, value)) throw hiddenName(kind, value);
  return original;
}

/**
 * Throws what an unknown name or URI gets when `request` names something `exposure` hides: what
 * its method names (jsonrpc/methods.ts), or the prompt or resource a completion refers to. A name
 * an override gave is replaced by the server's, in place.
 */
export function refuseHidden(request: JsonRpcRequest, exposure: Exposure): void {
  const subject = subjectOf(request.method);
  if (subject !== undefined) {
    const value = namedBy(request.method, request.params);
    if (value === undefined) return;
    const original = refuseKind(subject.kind, value, exposure);
    if (original !== value && request.params !== undefined) request.params.name = original;
    return;
  }
  if (request.method !== 'completion/complete') return;
  const ref = request.params?.ref;
  if (!isObject(ref)) return;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') ref.name = refuseKind('prompt', ref.name, exposure);
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string') refuseKind('uri', ref.uri, exposure);
}

/**
 * Leaves hidden items out of a list answer's `result` and applies the overrides to the others, in
 * place. False when `method` is no list.
 */
export function filterList(method: string, result: JsonObject, exposure: Exposure): boolean {
  if (!Object.hasOwn(LIST_KINDS, method)) return false;
  const kind: ListKind = LIST_KINDS[method as ListKind['method']];
  const items = result[kind.resultKey];
  if (!Array.isArray(items)) return false;
  const allowed = exposure[kind.filter];
  const overrides = exposure.overrides;
  if (kind.filter === 'resources' || overrides === undefined) {
    result[kind.resultKey] = items.filter((item) => !isObject(item) || typeof item[kind.field] !== 'string' || allowed(item[kind.field] as string));
    return true;
  }
  const named = kind.filter;
  result[kind.resultKey] = items.filter((item) => {
    if (!isObject(item) || typeof item.name !== 'string') return true;
    const client = clientName(overrides, named, item.name);
    if (client === undefined || !passesBoth(allowed, item.name, client)) return false;
    overrideItem(overrides, named, item, client);
    return true;
  });
  return true;
}
