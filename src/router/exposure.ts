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
import { canonicalUri } from './canonical.ts';
import { clientName, overrideItem, passesEvery, serverName } from './overrides.ts';

/** False when the exposure lets everything through unchanged (the pass-through then does no work for it). */
export function filters(exposure: Exposure): boolean {
  return exposure.tools !== PASS_ALL || exposure.prompts !== PASS_ALL || exposure.resources !== PASS_ALL || exposure.overrides !== undefined;
}

const hiddenName = (kind: 'tool' | 'prompt', name: string) =>
  new GatewayError(kind === 'tool' ? 'GW_UNKNOWN_TOOL' : 'GW_UNKNOWN_PROMPT', `Unknown ${kind}: ${name}`);
const hiddenUri = (uri: string) => new GatewayError('GW_RESOURCE_NOT_FOUND', `Resource not found: ${uri}`, { uri });

/** The catalog's code and message of `err` (a GatewayError), without `data`: what a server says of a name it does not have. */
export function bare(err: GatewayError): JsonRpcErrorObject {
  const { code, message } = (err as GatewayError).toJsonRpc();
  return { code, message };
}

/**
 * The error object a request naming something `exposure` hides gets: the catalog's code and message
 * for an unknown name or URI, without `data`. Undefined when nothing hidden is named; then a name
 * an override gave is replaced, in `request.params`, by the server's. Resolution and judgment in
 * one call (restoreNames, then hiddenRouted): what a request with the client's own names gets.
 */
export function hiddenNamed(request: JsonRpcRequest, exposure: Exposure): JsonRpcErrorObject | undefined {
  const asked = askedOf(request);
  const refusal = restoreNames(request, exposure);
  if (refusal !== undefined) return refusal;
  const hidden = hiddenRouted(request, exposure, asked);
  return hidden === undefined ? undefined : bare(hidden);
}

/** What the client named (the name or URI a method names, or a completion's ref), as it spelled it. */
export function askedOf(request: JsonRpcRequest): string | undefined {
  const named = namedBy(request.method, request.params);
  if (named !== undefined || request.method !== 'completion/complete') return named;
  const ref = request.params?.ref;
  if (!isObject(ref)) return undefined;
  const value = ref.type === 'ref/prompt' ? ref.name : ref.type === 'ref/resource' ? ref.uri : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Resolution on a single-target endpoint: a name an override gave is replaced, in place, by the
 * server's; a name nothing answers to (the server's own name of an item renamed away) gets the
 * error object of an unknown name. Judging what the names reach is hiddenRouted's (the chain's).
 */
export function restoreNames(request: JsonRpcRequest, exposure: Exposure): JsonRpcErrorObject | undefined {
  if (exposure.overrides === undefined) return undefined;
  const params = request.params;
  const subject = subjectOf(request.method);
  if (subject !== undefined && subject.kind !== 'uri') {
    const value = params?.name;
    if (typeof value !== 'string') return undefined;
    const original = serverName(exposure.overrides, subject.kind === 'tool' ? 'tools' : 'prompts', value);
    if (original === undefined) return bare(hiddenName(subject.kind, value));
    (params as JsonObject).name = original;
    return undefined;
  }
  const ref = request.method === 'completion/complete' ? params?.ref : undefined;
  if (!isObject(ref) || ref.type !== 'ref/prompt' || typeof ref.name !== 'string') return undefined;
  const original = serverName(exposure.overrides, 'prompts', ref.name);
  if (original === undefined) return bare(hiddenName('prompt', ref.name));
  ref.name = original;
  return undefined;
}

/** Whether `exposure` lets a `kind` item through under every name it carries: the server's `original`, its client name, and any other an override gave it. */
function passes(exposure: Exposure, kind: 'tool' | 'prompt', original: string): boolean {
  const plural = kind === 'tool' ? 'tools' : 'prompts';
  const client = clientName(exposure.overrides, plural, original);
  return client !== undefined && passesEvery(exposure[plural], exposure.overrides, plural, original, client);
}

/**
 * Judgment of a routed request (the server's own names, canonical URIs): the error of an unknown
 * name or URI (`asked`: the client's spelling, for the message) when what it names is hidden
 * under any name it carries; undefined when it passes. The one place filters, policy and virtual
 * picks are judged for a call, on every path (session/chain/entrance.ts).
 */
export function hiddenRouted(request: JsonRpcRequest, exposure: Exposure, asked: string | undefined): GatewayError | undefined {
  const params = request.params;
  const subject = subjectOf(request.method);
  if (subject !== undefined) {
    const value = params?.[subject.field];
    if (typeof value !== 'string') return undefined;
    if (subject.kind === 'uri') return exposure.resources(value) ? undefined : hiddenUri(asked ?? value);
    return passes(exposure, subject.kind, value) ? undefined : hiddenName(subject.kind, asked ?? value);
  }
  const ref = request.method === 'completion/complete' ? params?.ref : undefined;
  if (!isObject(ref)) return undefined;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string' && !passes(exposure, 'prompt', ref.name)) return hiddenName('prompt', asked ?? ref.name);
  if (ref.type === 'ref/resource' && typeof ref.uri === 'string' && !exposure.resources(ref.uri)) return hiddenUri(asked ?? ref.uri);
  return undefined;
}

/** Throws what an unknown name or URI gets when `request` names something `exposure` hides (hiddenNamed, as a throw). */
export function refuseHidden(request: JsonRpcRequest, exposure: Exposure): void {
  const asked = askedOf(request);
  const refusal = restoreNames(request, exposure);
  if (refusal !== undefined) throw new GatewayError(refusal.message.startsWith('Unknown tool') ? 'GW_UNKNOWN_TOOL' : 'GW_UNKNOWN_PROMPT', refusal.message);
  const hidden = hiddenRouted(request, exposure, asked);
  if (hidden !== undefined) throw hidden;
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
    result[kind.resultKey] = items.filter((item) => !isObject(item) || typeof item[kind.field] !== 'string' || allowed(canonicalUri(item[kind.field] as string) ?? (item[kind.field] as string)));
    return true;
  }
  const named = kind.filter;
  result[kind.resultKey] = items.filter((item) => {
    if (!isObject(item) || typeof item.name !== 'string') return true;
    const client = clientName(overrides, named, item.name);
    if (client === undefined || !passesEvery(allowed, overrides, named, item.name, client)) return false;
    overrideItem(overrides, named, item, client);
    return true;
  });
  return true;
}
