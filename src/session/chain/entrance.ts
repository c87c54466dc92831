/**
 * The entrance of the chain (chain.ts), right after routing (the owner is known, the names are the
 * server's own, an aggregate's URIs decoded): every URI the request names is put in its canonical
 * spelling (router/canonical.ts) in place, so every later stage judges, and the upstream receives,
 * the same text; then the target's filters, the policy's grant and a virtual server's picks judge
 * every name the item carries (router/exposure.ts hiddenRouted). A URI with no safe spelling is
 * refused (GW_INVALID_URI); a hidden item is refused as an unknown one (Hidden).
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import { subjectOf } from '../../jsonrpc/methods.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import { canonicalUri } from '../../router/canonical.ts';
import { filters, hiddenRouted } from '../../router/exposure.ts';
import type { Exposure } from '../../router/list-merge.ts';

/**
 * A request the filters or the policy hide: on a single target's endpoint answered as the server
 * answers an unknown name (no `data`) and audited as denied; on an aggregate, the error an unknown
 * name gets there (aggregate-routing.ts), so a hidden name looks like one nobody has.
 */
export class Hidden extends Error {
  readonly error: GatewayError;
  constructor(error: GatewayError) {
    super(error.message);
    this.error = error;
  }
}

/** `holder[key]` in canonical spelling, in place; throws GW_INVALID_URI when it has none. */
function canonicalise(holder: JsonObject, key: string): void {
  const value = holder[key];
  if (typeof value !== 'string') return;
  const canonical = canonicalUri(value);
  if (canonical === undefined) throw new GatewayError('GW_INVALID_URI', undefined, { reason: 'no canonical spelling: a scheme, well-formed escapes, no escaped "/", "\\" or NUL' });
  if (canonical !== value) holder[key] = canonical;
}

/**
 * Canonicalises and judges a routed request (see the file comment); `asked`: the client's spelling
 * of what it names, for the refusal's message. Throws; returns nothing when the request goes on.
 */
export function enter(request: JsonRpcRequest, exposure: Exposure, asked: string | undefined): void {
  const params = request.params;
  const subject = subjectOf(request.method);
  if (subject === undefined) {
    if (request.method !== 'completion/complete' || !isObject(params?.ref)) return;
    if (params.ref.type === 'ref/resource') canonicalise(params.ref, 'uri');
  } else if (subject.kind === 'uri' && params !== undefined) {
    canonicalise(params, 'uri');
  }
  // Hot path: four identity reads when the target filters nothing and no policy narrows it.
  if (!filters(exposure)) return;
  const hidden = hiddenRouted(request, exposure, asked) ?? hiddenSkill(request, exposure, asked);
  if (hidden !== undefined) throw new Hidden(hidden);
}

/**
 * SEP-2640: a skill is one thing, named by its `skill://<name>/SKILL.md`. A directory of a skill
 * the caller may not see (its SKILL.md hidden by a filter or the policy) is as unknown as the
 * skill (docs/aggregation.md, "Skills"), whatever the directory's own URI would be allowed:
 * else its file names would list what `skills/list` left out.
 */
function hiddenSkill(request: JsonRpcRequest, exposure: Exposure, asked: string | undefined): GatewayError | undefined {
  if (request.method !== 'resources/directory/read' || typeof request.params?.uri !== 'string') return undefined;
  const name = /^skill:\/\/([^/?#]+)/i.exec(request.params.uri)?.[1];
  if (name === undefined) return undefined;
  const identity: JsonRpcRequest = { ...request, method: 'skills/get', params: { uri: `skill://${name}/SKILL.md` } };
  return hiddenRouted(identity, exposure, asked ?? request.params.uri);
}
