/**
 * A 2026 retry carrying a `requestState` (serve.ts): it resumes the parked `input_required` round
 * it names (mrtr.ts, SEP-2322), here or, with gateway.cluster, on the replica its sealed state
 * names (docs/scaling.md, "The 2026 era across replicas").
 */
import { GatewayError, toErrorResponse } from '../../errors/gateway-error.ts';
import type { JsonRpcRequest } from '../../jsonrpc/types.ts';
import { callerOf, type StatelessRequest } from './caller.ts';
import type { HostPool } from './hosts.ts';
import type { InputBridge } from './mrtr.ts';
import type { StateClaims, StateCodec, StateKeys } from './request-state.ts';

/** What of the server resuming reads. */
export interface ResumeState {
  readonly codec: StateCodec;
  readonly bridge: InputBridge;
  readonly hosts: HostPool;
  readonly cluster: StateKeys | undefined;
}

/** Resumes the call `state` (the retry's `requestState`) names; the retry answers in its place. */
export function resume(server: ResumeState, input: StatelessRequest, state: unknown, logLevel: string | undefined): void {
  const { request } = input;
  const claims = server.codec.open(state);
  if (claims === undefined) throw new GatewayError('GW_INVALID_REQUEST_STATE', 'Invalid params: requestState was not issued by this gateway or was altered');
  // Another replica's call, not relayed to it (expired, or already a hop): nothing here to resume.
  if (claims.replica !== server.cluster?.replica) throw new GatewayError('GW_INVALID_REQUEST_STATE', 'Invalid params: requestState is unknown, expired, already used or not yours');
  try {
    server.bridge.resume(claims, request, server.hosts.scopeOf(callerOf(input)), input.exchange, logLevel, server.hosts.byId(claims.host), input.principal);
  } catch (err) {
    // SEP-2350 over HTTP: the 403 names every scope the call needs, as the chain's challenge does.
    const required = err instanceof GatewayError && err.code === 'GW_STEP_UP_REQUIRED' ? err.details.requiredScopes : undefined;
    if (input.challenge === undefined || !Array.isArray(required)) throw err;
    input.exchange.json(403, JSON.stringify(toErrorResponse(request.id, err as GatewayError)), { 'www-authenticate': input.challenge(required as string[]) });
  }
}

/**
 * With gateway.cluster: the other replica holding the call a retry resumes (its `requestState`
 * opens, is not expired, and names that replica); undefined when this replica answers it.
 */
export function ownerOf({ codec, cluster }: ResumeState, request: JsonRpcRequest): string | undefined {
  const state = request.params?.requestState;
  if (cluster === undefined || state === undefined || request.method === 'server/discover' || request.method === 'subscriptions/listen') return undefined;
  const claims = codec.open(state);
  const owner = claims?.replica;
  return owner === undefined || owner === cluster.replica || (claims as StateClaims).expires < Date.now() ? undefined : owner;
}
