/**
 * Filters on a single-target endpoint, where names are the server's own: a request naming what a
 * filter hides is refused the way servers answer a name they do not have (-32602 "Unknown tool:
 * <name>", the spec's own example, with no gateway code in `data` that would tell the two apart),
 * and list answers leave hidden items out. Pure functions.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { isObject } from '../jsonrpc/envelope.ts';
import { namedBy, subjectOf, type Subject } from '../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import { PASS_ALL } from './glob.ts';
import { LIST_KINDS, type Exposure, type ListKind } from './list-merge.ts';

/** False when the exposure lets everything through (the pass-through then does no work for it). */
export function filters(exposure: Exposure): boolean {
  return exposure.tools !== PASS_ALL || exposure.prompts !== PASS_ALL || exposure.resources !== PASS_ALL;
}

const hiddenName = (kind: 'tool' | 'prompt', name: string) =>
  new GatewayError(kind === 'tool' ? 'GW_UNKNOWN_TOOL' : 'GW_UNKNOWN_PROMPT', `Unknown ${kind}: ${name}`);
const hiddenUri = (uri: string) => new GatewayError('GW_RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });

/**
 * The error object a request naming something `exposure` hides gets: the catalog's code and message
 * for an unknown name or URI, without `data`. Undefined when nothing hidden is named.
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

/** Throws what an unknown name or URI gets when `value`, a `kind` of thing, is hidden by `exposure`. */
function refuseKind(kind: Subject['kind'], value: string, exposure: Exposure): void {
  const allowed = kind === 'tool' ? exposure.tools(value) : kind === 'prompt' ? exposure.prompts(value) : exposure.resources(value);
  if (!allowed) throw kind === 'uri' ? hiddenUri(value) : hiddenName(kind, value);
}

/**
 * Throws what an unknown name or URI gets when `request` names something `exposure` hides: what
 * its method names (jsonrpc/methods.ts), or the prompt or resource a completion refers to.
 */
export function refuseHidden(request: JsonRpcRequest, exposure: Exposure): void {
  const subject = subjectOf(request.method);
  if (subject !== undefined) {
    const value = namedBy(request.method, request.params);
    if (value !== undefined) refuseKind(subject.kind, value, exposure);
    return;
  }
  if (request.method !== 'completion/complete') return;
  const ref = request.params?.ref;
  if (!isObject(ref)) return;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') refuseKind('prompt', ref.name, exposure);
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string') refuseKind('uri', ref.uri, exposure);
}

/** Leaves hidden items out of a list answer's `result`, in place. False when `method` is no list. */
export function filterList(method: string, result: JsonObject, exposure: Exposure): boolean {
  if (!Object.hasOwn(LIST_KINDS, method)) return false;
  const kind: ListKind = LIST_KINDS[method as ListKind['method']];
  const items = result[kind.resultKey];
  if (!Array.isArray(items)) return false;
  const allowed = exposure[kind.filter];
  result[kind.resultKey] = items.filter((item) => !isObject(item) || typeof item[kind.field] !== 'string' || allowed(item[kind.field] as string));
  return true;
}
