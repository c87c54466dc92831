/**
 * The wire between replicas (docs/scaling.md, "The hop"): a request the edge replica forwards to
 * the replica that owns its session, over one keep-alive undici Agent per gateway. Generic on
 * purpose: any method, path, headers and body to a named replica's URL, the answer as a stream
 * (status, headers, body) the caller pipes on with back-pressure. Connecting is bounded by
 * `connectTimeoutMs`; the answer is not (a tool call may run for minutes, and its SSE stream
 * carries keep-alives), and an abort (the client went away) drops the hop's connection, which the
 * owner sees as its client going away.
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';

export interface HopRequest {
  readonly method: string;
  /** Path and query, as the client sent them. */
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: string | undefined;
  readonly signal: AbortSignal;
}

export interface HopResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Readable;
}

export interface ReplicaHop {
  /** Sends `request` to the replica at `origin` (its advertiseUrl). Rejects with a HopFailure before an answer began. */
  send(origin: string, request: HopRequest): Promise<HopResponse>;
  close(): Promise<void>;
}

/** Why a hop got no answer: `unreachable` (refused, connect timeout, no route: the owner is gone) or `lost` (the connection broke first). */
export class HopFailure extends Error {
  readonly kind: 'unreachable' | 'lost' | 'aborted';
  constructor(kind: 'unreachable' | 'lost' | 'aborted', cause: unknown) {
    super(`replica hop failed: ${kind}`, { cause });
    this.kind = kind;
  }
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

function kindOf(err: unknown, signal: AbortSignal): HopFailure['kind'] {
  if (signal.aborted) return 'aborted';
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && UNREACHABLE.has(code) ? 'unreachable' : 'lost';
}

/**
 * `connectTimeoutMs`: gateway.cluster.forwardConnectTimeoutMs. Connections per owner are not
 * capped here: each hop stands for one downstream request the edge admitted, so the edge's own
 * connection and in-flight limits bound them (a cap here would queue a stream behind another).
 */
export function createReplicaHop(connectTimeoutMs: number): ReplicaHop {
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs },
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 4_000,
  });
  return {
    async send(origin, { method, path, headers, body, signal }) {
      try {
        const answer = await agent.request({ origin, path, method: method as Dispatcher.HttpMethod, headers, body: body ?? null, signal });
        return { status: answer.statusCode, headers: answer.headers, body: answer.body };
      } catch (err) {
        throw new HopFailure(kindOf(err, signal), err);
      }
    },
    close: () => agent.destroy(),
  };
}
