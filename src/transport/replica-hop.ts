/**
 * The wire between replicas (docs/scaling.md, "The hop"): a request the edge replica forwards to
 * the replica that owns its session, over one keep-alive undici Agent per gateway. Generic on
 * purpose: any method, path, headers and body to a named replica's URL, the answer handed to the
 * caller's `HopAnswer` as it comes (status and headers, then each chunk), with back-pressure.
 * Connecting is bounded by `connectTimeoutMs`; the answer is not (a tool call may run for minutes,
 * and its SSE stream carries keep-alives), and an abort (the client went away) drops the hop's
 * connection, which the owner sees as its client going away.
 *
 * Through undici's dispatch handler rather than `request()`: no Readable, no promise of the
 * answer's body and no AbortController per hop; the chunks go straight to the caller, which
 * writes them on (docs/scaling.md, "Where a relayed call's time goes").
 */
import { Agent, type Dispatcher } from 'undici';

export interface HopRequest {
  readonly method: string;
  /** Path and query, as the client sent them. */
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: string | undefined;
}

/** Where the owner's answer goes, as it comes. Called only after `began` resolved. */
export interface HopAnswer {
  /** The answer began: its status and headers (1xx interim answers are not passed on). */
  start(status: number, headers: Record<string, string | string[] | undefined>): void;
  /** A chunk of the body; false when the reader is behind (the hop pauses until `resume`). */
  data(chunk: Buffer): boolean;
  /** The body ended. */
  end(): void;
  /** The connection broke, or the hop was aborted, after the answer began. */
  fail(err: Error): void;
}

/** One hop under way. */
export interface HopExchange {
  /** Resolves once the answer began (`start` was called); rejects with a HopFailure when none came. */
  readonly began: Promise<void>;
  /** The client went away: drop the hop (its connection; the owner sees its client go). */
  abort(): void;
  /** The reader caught up after `data` returned false. */
  resume(): void;
}

export interface ReplicaHop {
  /** Sends `request` to the replica at `origin` (its advertiseUrl); the answer goes to `answer`. */
  send(origin: string, request: HopRequest, answer: HopAnswer): HopExchange;
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

function kindOf(err: unknown, aborted: boolean): HopFailure['kind'] {
  if (aborted) return 'aborted';
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && UNREACHABLE.has(code) ? 'unreachable' : 'lost';
}

/** The reason an aborted hop gives undici (never shown to anyone). */
const CLIENT_GONE = new Error('the client of this replica hop went away');

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
    send(origin, { method, path, headers, body }, answer) {
      let controller: Dispatcher.DispatchController | undefined;
      let aborted = false;
      let started = false;
      let settle: (failure?: HopFailure) => void = () => undefined;
      const began = new Promise<void>((resolve, reject) => {
        settle = (failure) => (failure === undefined ? resolve() : reject(failure));
      });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(given) {
          controller = given;
          if (aborted) given.abort(CLIENT_GONE);
        },
        onResponseStart(_given, status, answerHeaders) {
          if (status < 200) return;
          started = true;
          settle();
          answer.start(status, answerHeaders);
        },
        onResponseData(given, chunk) {
          if (!answer.data(chunk)) given.pause();
        },
        onResponseEnd() {
          answer.end();
        },
        onResponseError(_given, err) {
          if (started) answer.fail(err);
          else settle(new HopFailure(kindOf(err, aborted), err));
        },
      };
      agent.dispatch({ origin, path, method: method as Dispatcher.HttpMethod, headers, body: body ?? null }, handler);
      return {
        began,
        abort() {
          if (aborted) return;
          aborted = true;
          controller?.abort(CLIENT_GONE);
        },
        resume: () => controller?.resume(),
      };
    },
    close: () => agent.destroy(),
  };
}
