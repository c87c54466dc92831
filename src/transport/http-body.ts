/**
 * Small helpers shared by the remote transports: the headers every upstream request carries (and
 * those one message adds), reading the head of an error body, and the response's media type.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RemoteTargetConfig } from '../config/types.ts';
import type { SendOptions } from './types.ts';

/** The undici body shape these helpers need (a readable of Buffers that can be dumped). */
export interface ReadableBody extends AsyncIterable<Buffer> {
  dump(opts?: { limit: number }): Promise<void>;
  destroy(error?: Error): unknown;
}

/**
 * The target's configured headers, plus the downstream's Authorization when the target opted in
 * with `forwardAuthorization`. The downstream's value then wins over a configured one: the opt-in
 * says the upstream authenticates the end user, and the configured header remains the credential
 * for downstreams that sent none.
 */
export function upstreamHeaders(target: RemoteTargetConfig, authorization: string | undefined, extra?: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { ...target.headers, ...extra };
  if (target.forwardAuthorization && authorization !== undefined) headers.authorization = authorization;
  return headers;
}

/**
 * Adds one message's own headers (SendOptions) to `base`, in place, and returns it: the per-message
 * ones never replace a header the target or the protocol already set; the trace context is the
 * gateway's span's and always goes (trace-context.ts). Nothing is allocated when there are none.
 */
export function withMessageHeaders(base: Record<string, string>, options: SendOptions | undefined): Record<string, string> {
  if (options === undefined) return base;
  const { headers, trace } = options;
  if (headers !== undefined) for (const name in headers) base[name] ??= headers[name]!;
  if (trace !== undefined) {
    base.traceparent = trace.traceparent;
    if (trace.tracestate !== undefined) base.tracestate = trace.tracestate;
  }
  return base;
}

/** Up to `limit` bytes of a body, for quoting an error; the rest is discarded. */
export async function readHead(body: ReadableBody, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        body.destroy();
        break;
      }
    }
  } catch {
    // a broken error body is no more informative than none
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

/** Discards a body we do not need, never throwing. */
export function discard(body: ReadableBody): Promise<void> {
  return body.dump({ limit: 64 * 1024 }).catch(() => undefined);
}

/** The media type of a response, lower-cased, without parameters ('' when absent). */
export function mediaType(headers: IncomingHttpHeaders): string {
  const value = headers['content-type'];
  const text = Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  return text.split(';', 1)[0]!.trim().toLowerCase();
}

/** Waits `ms`, or less when `signal` aborts (it then resolves too: callers check the signal). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
