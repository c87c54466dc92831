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
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cluster } from '../cluster/cluster.ts';
import type { SealedSession } from '../cluster/sealed-id.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import type { StatelessServer } from '../session/stateless/serve.ts';
import type { SessionStore } from '../session/store.ts';
import { HopFailure, type HopAnswer, type HopExchange } from '../transport/replica-hop.ts';
import { encodePrincipal, hopFactsOf, HOP_CREDENTIAL_HEADER, HOP_HEADER, HOP_PRINCIPAL_HEADER } from './replica-hop-guard.ts';

/**
 * Relays the request if `sessionId` is another live replica's session: true once it is being
 * answered that way, false when the route should serve it itself (its own session, or none: the
 * route's 404). Throws GW_SESSION_NOT_FOUND with `gone` as the message when the owner is gone.
 * `needsCredential`: a target behind the route is sent or exchanges the caller's own token
 * (`forwardAuthorization`, `tokenExchange`), so the owner needs it, sealed inside the hop.
 */
export type Forward = (request: FastifyRequest, reply: FastifyReply, sessionId: string, gone: string, needsCredential: boolean) => Promise<boolean>;

/**
 * What the owner reads of a relayed request besides its body and the hop's own headers: the
 * protocol's (MCP 2025-06-18 "Streamable HTTP": session, version, Last-Event-ID; the 2026 method
 * and parameter headers) and the trace context. Nothing else crosses, least of all a credential:
 * the client's Authorization, API key header or cookies stay on the edge, which authenticated
 * them; the owner gets the principal, and the token itself only sealed (hop-signature.ts).
 */
const PASSED = new Set(['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'mcp-method', 'mcp-name', 'traceparent', 'tracestate']);
const PASSED_PREFIX = 'mcp-param-';
const DROPPED_BACK = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

function outgoing(request: FastifyRequest): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const name in request.headers) {
    const value = request.headers[name];
    if (value !== undefined && (PASSED.has(name) || name.startsWith(PASSED_PREFIX))) headers[name] = value;
  }
  return headers;
}

function incoming(given: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const name in given) {
    const value = given[name];
    if (value !== undefined && !DROPPED_BACK.has(name)) headers[name] = value;
  }
  return headers;
}

/**
 * Writes the owner's answer to the client: each chunk as it comes (SSE events are not held back), at
 * the pace the client reads. Straight from the hop's handler into the reply: no stream.pipeline
 * (its per-call AbortController and DOMException were a tenth of the edge's CPU per relayed call)
 * and no Readable in between (docs/scaling.md "Figures").
 */
function answerInto(reply: FastifyReply, exchange: () => HopExchange, onClose: () => void, log: Logger, owner: string): HopAnswer {
  const raw = reply.raw;
  const resume = () => exchange().resume();
  const done = () => {
    raw.off('close', onClose);
    raw.off('drain', resume);
  };
  return {
    start(status, headers) {
      reply.hijack();
      raw.writeHead(status, incoming(headers));
    },
    data(chunk) {
      if (raw.write(chunk)) return true;
      raw.once('drain', resume);
      return false;
    },
    end() {
      done();
      raw.end();
    },
    fail(err) {
      done();
      if (!raw.destroyed) log.debug({ err, owner }, 'replica hop ended early');
      raw.destroy();
    },
  };
}

/**
 * Sends the request to `replica` at `url` and pipes its answer back: true once it is answered that
 * way (or the client went away), false when the replica could not be reached or the connection
 * broke before an answer began (a refusal marks it gone).
 */
async function relayTo(cluster: Cluster, request: FastifyRequest, reply: FastifyReply, replica: string, url: string, needsCredential: boolean, log: Logger): Promise<boolean> {
  const raw = reply.raw;
  // The client left while the route awaited (authentication, the directory lookup): its 'close'
  // came before our listener, so a hop now would pause on its first chunk for good.
  if (raw.destroyed) {
    reply.hijack();
    return true;
  }
  const principal = encodePrincipal(request.principal);
  const headers = outgoing(request);
  const body = typeof request.body === 'string' ? request.body : undefined;
  let facts = hopFactsOf(request.method, request.url, request.headers['mcp-session-id'], principal);
  const authorization = needsCredential ? request.headers.authorization : undefined;
  if (authorization !== undefined) {
    const sealed = cluster.signer.sealCredential(authorization, facts);
    facts = { ...facts, credential: sealed };
    headers[HOP_CREDENTIAL_HEADER] = sealed;
  }
  headers[HOP_HEADER] = cluster.signer.sign(facts, body ?? '');
  if (principal !== '') headers[HOP_PRINCIPAL_HEADER] = principal;
  // The client going away (before or during the answer) drops the hop.
  const onClose = () => {
    if (!raw.writableFinished) exchange.abort();
  };
  const exchange: HopExchange = cluster.hop.send(url, { method: request.method, path: request.url, headers, body }, answerInto(reply, () => exchange, onClose, log, replica));
  raw.once('close', onClose);
  try {
    await exchange.began;
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
  return true;
}

/** Session ids this edge opened lately (only ones a key of the ring opened); past this many, it starts afresh. */
const MAX_OPENED = 4_096;

export function createForwarder(cluster: Cluster, store: SessionStore, logger: Logger): Forward {
  const log = logger.child({ component: 'replica-hop' });
  // A client sends one id many times: it is opened once, not on every relayed call.
  const opened = new Map<string, SealedSession>();
  const open = (id: string): SealedSession | undefined => {
    let sealed = opened.get(id);
    if (sealed !== undefined) return sealed;
    sealed = cluster.sealer.open(id);
    if (sealed === undefined) return undefined;
    if (opened.size >= MAX_OPENED) opened.clear();
    opened.set(id, sealed);
    return sealed;
  };
  return async (request, reply, sessionId, gone, needsCredential) => {
    // Own sessions first, with no crypto: the owner's hot path stays a map lookup.
    if (request.hop || store.get(sessionId, request.principal) !== undefined) return false;
    const sealed = open(sessionId);
    // Forged, altered, another cluster's, ours, or another principal's: the route's own 404.
    if (sealed === undefined || sealed.replica === cluster.replicaId || sealed.principal !== (request.principal?.id ?? '')) return false;
    const owner = await cluster.directory.lookup(sealed.replica);
    if (owner === undefined || !(await relayTo(cluster, request, reply, sealed.replica, owner.url, needsCredential, log))) throw new GatewayError('GW_SESSION_NOT_FOUND', gone);
    return true;
  };
}

/**
 * Relays a 2026 retry to the replica holding its parked call, when that is another one: a promise
 * of true once it is answered that way, undefined when this replica serves it (no requestState,
 * its own, one that does not open, or already a hop). Owner gone: rejects with
 * GW_INVALID_REQUEST_STATE, `data.reason` "owner-gone" (the client starts the call again).
 */
export type ForwardRetry = (request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest, needsCredential: () => boolean) => Promise<true> | undefined;

const OWNER_GONE = 'Invalid params: the replica holding this call is gone; send the request again without requestState';

export function createRetryForwarder(cluster: Cluster, stateless: StatelessServer, logger: Logger): ForwardRetry {
  const log = logger.child({ component: 'replica-hop' });
  return (request, reply, message, needsCredential) => {
    const replica = request.hop ? undefined : stateless.ownerOf(message);
    if (replica === undefined) return undefined;
    return (async () => {
      const owner = await cluster.directory.lookup(replica);
      if (owner === undefined || !(await relayTo(cluster, request, reply, replica, owner.url, needsCredential(), log))) {
        throw new GatewayError('GW_INVALID_REQUEST_STATE', OWNER_GONE, { reason: 'owner-gone' });
      }
      return true as const;
    })();
  };
}
