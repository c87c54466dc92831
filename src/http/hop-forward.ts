/**
 * The edge's side of a replica hop (docs/scaling.md): a request whose sealed session id
 * names another replica is relayed to that replica's advertised URL, its answer (JSON, or an SSE
 * stream as its events come) piped back with back-pressure; a client that goes away aborts the
 * hop, which the owner sees as its own client going away. The routes decide where (after their
 * own checks, before the session lookup); this module decides whether and how.
 *
 * Owner gone (no directory entry, or its port refuses / does not connect in time): the same 404
 * as an unknown session at once, never a hang. A hop is never forwarded again.
 *
 * A 2026 retry (a request with `requestState`) is relayed the same way to the replica its sealed
 * state names (docs/scaling.md, "The 2026 era across replicas"); that replica gone: GW_INVALID_REQUEST_STATE "owner-gone".
 */
import { pipeline } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cluster } from '../cluster/cluster.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import type { StatelessServer } from '../session/stateless/serve.ts';
import type { SessionStore } from '../session/store.ts';
import { HopFailure, type HopResponse } from '../transport/replica-hop.ts';
import { encodePrincipal, hopFactsOf, HOP_HEADER, HOP_PRINCIPAL_HEADER } from './replica-hop-guard.ts';

/**
 * Relays the request if `sessionId` is another live replica's session: true once it is being
 * answered that way, false when the route should serve it itself (its own session, or none: the
 * route's 404). Throws GW_SESSION_NOT_FOUND with `gone` as the message when the owner is gone.
 */
export type Forward = (request: FastifyRequest, reply: FastifyReply, sessionId: string, gone: string) => Promise<boolean>;

/** Not passed on: this connection's own (RFC 9110 7.6.1), the length undici sets, and hop headers a client may have sent. */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length', HOP_HEADER, HOP_PRINCIPAL_HEADER]);
const DROPPED_BACK = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

function outgoing(request: FastifyRequest): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !DROPPED.has(name)) headers[name] = value;
  return headers;
}

function incoming(given: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(given)) if (value !== undefined && !DROPPED_BACK.has(name)) headers[name] = value;
  return headers;
}

/** Pipes the owner's answer to the client: each chunk as it comes (SSE events are not held back), at the pace the client reads. */
function relayAnswer(answer: HopResponse, reply: FastifyReply, abort: AbortController, onClose: () => void, log: Logger, owner: string): void {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(answer.status, incoming(answer.headers));
  pipeline(answer.body, raw, (err) => {
    raw.off('close', onClose);
    if (err !== undefined && err !== null && !abort.signal.aborted) {
      log.debug({ err, owner }, 'replica hop ended early');
      abort.abort();
    }
  });
}

/**
 * Sends the request to `replica` at `url` and pipes its answer back: true once it is answered that
 * way (or the client went away), false when the replica could not be reached or the connection
 * broke before an answer began (a refusal marks it gone).
 */
async function relayTo(cluster: Cluster, request: FastifyRequest, reply: FastifyReply, replica: string, url: string, log: Logger): Promise<boolean> {
  const raw = reply.raw;
  const abort = new AbortController();
  const onClose = () => {
    if (!raw.writableFinished) abort.abort();
  };
  raw.once('close', onClose);
  const principal = encodePrincipal(request.principal);
  const headers = outgoing(request);
  headers[HOP_HEADER] = cluster.signer.sign(hopFactsOf(request.method, request.url, request.headers['mcp-session-id'], principal));
  if (principal !== '') headers[HOP_PRINCIPAL_HEADER] = principal;
  let answer: HopResponse;
  try {
    const body = typeof request.body === 'string' ? request.body : undefined;
    answer = await cluster.hop.send(url, { method: request.method, path: request.url, headers, body, signal: abort.signal });
  } catch (err) {
    if (err instanceof HopFailure && err.kind === 'aborted') {
      reply.hijack();
      return true;
    }
    raw.off('close', onClose);
    if (err instanceof HopFailure && err.kind === 'unreachable') cluster.directory.markGone(replica);
    log.info({ owner: replica, kind: err instanceof HopFailure ? err.kind : 'error' }, 'owner replica unreachable');
    return false;
  }
  relayAnswer(answer, reply, abort, onClose, log, replica);
  return true;
}

export function createForwarder(cluster: Cluster, store: SessionStore, logger: Logger): Forward {
  const log = logger.child({ component: 'replica-hop' });
  return async (request, reply, sessionId, gone) => {
    // Own sessions first, with no crypto: the owner's hot path stays a map lookup.
    if (request.hop || store.get(sessionId, request.principal) !== undefined) return false;
    const sealed = cluster.sealer.open(sessionId);
    // Forged, altered, another cluster's, ours, or another principal's: the route's own 404.
    if (sealed === undefined || sealed.replica === cluster.replicaId || sealed.principal !== (request.principal?.id ?? '')) return false;
    const owner = await cluster.directory.lookup(sealed.replica);
    if (owner === undefined || !(await relayTo(cluster, request, reply, sealed.replica, owner.url, log))) throw new GatewayError('GW_SESSION_NOT_FOUND', gone);
    return true;
  };
}

/**
 * Relays a 2026 retry to the replica holding its parked call, when that is another one: a promise
 * of true once it is answered that way, undefined when this replica serves it (no requestState,
 * its own, one that does not open, or already a hop). Owner gone: rejects with
 * GW_INVALID_REQUEST_STATE, `data.reason` "owner-gone" (the client starts the call again).
 */
export type ForwardRetry = (request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest) => Promise<true> | undefined;

const OWNER_GONE = 'Invalid params: the replica holding this call is gone; send the request again without requestState';

export function createRetryForwarder(cluster: Cluster, stateless: StatelessServer, logger: Logger): ForwardRetry {
  const log = logger.child({ component: 'replica-hop' });
  return (request, reply, message) => {
    const replica = request.hop ? undefined : stateless.ownerOf(message);
    if (replica === undefined) return undefined;
    return (async () => {
      const owner = await cluster.directory.lookup(replica);
      if (owner === undefined || !(await relayTo(cluster, request, reply, replica, owner.url, log))) {
        throw new GatewayError('GW_INVALID_REQUEST_STATE', OWNER_GONE, { reason: 'owner-gone' });
      }
      return true as const;
    })();
  };
}
