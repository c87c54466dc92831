/**
 * Which warm spare (spares.ts) may serve which session, and what a waiting spare answers. Pure
 * rules, kept apart from the shelves that hold the spares.
 */
import { isDeepStrictEqual } from 'node:util';
import type { TargetConfig } from '../config/types.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { UpstreamConnection } from './connection.ts';

/** How many spares `target` wants: 0 unless it is a per-session stdio target without principalEnv. */
export function sparesWanted(target: TargetConfig): number {
  if (target.type !== 'stdio' || target.upstream?.mode === 'shared' || Object.keys(target.principalEnv).length > 0) return 0;
  return target.upstream?.spares ?? 0;
}

/**
 * Whether a spare initialized with `spareParams` (answered with `result`) serves a session whose
 * initialize says `params` as a fresh child would: the same declared capabilities (the server may
 * act on them: roots, sampling, elicitation), and a protocol version the server would answer the
 * same way (the one the spare asked for, or the one the server chose, which it therefore speaks).
 * The clientInfo differs and is documented (docs/upstreams.md).
 */
export function fits(params: JsonObject, spareParams: JsonObject, result: JsonObject): boolean {
  if (!isDeepStrictEqual(params.capabilities ?? {}, spareParams.capabilities ?? {})) return false;
  return params.protocolVersion === spareParams.protocolVersion || params.protocolVersion === result.protocolVersion;
}

/**
 * The kind of spare to start next, learnt from the session that took the last one: initialized
 * with the gateway's own params when that session's initialize fits them (it would have been
 * served with no handshake at all), else spawned only, for the client's own initialize.
 */
export function kindFor(params: JsonObject, gatewayParams: JsonObject): 'initialized' | 'spawned' {
  return fits(params, gatewayParams, gatewayParams) ? 'initialized' : 'spawned';
}

/** A waiting spare has no client: it may be pinged; anything else it asks is refused. */
export function answerWaiting(connection: UpstreamConnection, request: JsonRpcRequest): void {
  const answer =
    request.method === 'ping'
      ? { jsonrpc: '2.0' as const, id: request.id, result: {} }
      : { jsonrpc: '2.0' as const, id: request.id, error: { code: -32601, message: 'No client is connected yet' } };
  void connection.correlator.send(answer).catch(() => undefined);
}
