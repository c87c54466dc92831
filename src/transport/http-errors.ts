/**
 * How a failed HTTP exchange with a remote target becomes a GatewayError. Error data names the
 * target and, when there was an answer, its HTTP status; never the URL or a header (they may hold
 * credentials), nor the upstream's own text: that goes to the log, under the correlation id the
 * client sees.
 */
import { correlated, GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';

/** Socket error codes that mean "no HTTP exchange took place", with the words the docs use. */
const CONNECT_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
};

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|HOSTNAME_MISMATCH)/;

/** Longest upstream-provided text copied into `reason`. */
const REASON_CHARS = 200;

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Happy eyeballs (several addresses tried) fails with an AggregateError of socket errors.
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner)) return inner.map(errorCode).find((c) => c !== undefined);
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errorCode(cause);
}

/** A thrown network error (undici or socket) as GW_UPSTREAM_UNREACHABLE / GW_UPSTREAM_CLOSED. */
export function toNetworkError(target: string, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = errorCode(err);
  const known = code === undefined ? undefined : CONNECT_REASONS[code];
  if (known !== undefined) {
    return new GatewayError('GW_UPSTREAM_UNREACHABLE', `Upstream "${target}" could not be reached: ${known}`, { target, reason: known });
  }
  if (code !== undefined && TLS_CODE.test(code)) {
    return new GatewayError('GW_UPSTREAM_UNREACHABLE', `Upstream "${target}" could not be reached: TLS handshake failed (${code})`, {
      target,
      reason: 'TLS handshake failed',
      tlsError: code,
    });
  }
  const reason = code ?? 'connection lost';
  return new GatewayError('GW_UPSTREAM_CLOSED', `Connection to upstream "${target}" failed: ${reason}`, { target, reason });
}

/**
 * An HTTP error status. `body` is the start of the answer, read only to quote the upstream's own
 * JSON-RPC error message (servers often explain a 400 that way).
 */
export function toHttpError(target: string, status: number, body: string, logger: Logger): GatewayError {
  let reason: string | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    const error = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: { message?: unknown } }).error : undefined;
    if (typeof error?.message === 'string') reason = error.message.slice(0, REASON_CHARS);
  } catch {
    // not JSON: nothing to quote
  }
  const details = correlated(target, { status });
  logger.warn({ status, upstreamMessage: reason, correlationId: details.correlationId }, 'upstream answered with an HTTP error');
  return new GatewayError('GW_UPSTREAM_HTTP_ERROR', `Upstream "${target}" answered HTTP ${status}`, details, {
    internal: reason === undefined ? {} : { upstreamMessage: reason },
  });
}

/** A notification's or response's POST that got no answer within the target's timeout. */
export function postTimeout(target: string, message: JsonRpcMessage, timeoutMs: number): GatewayError {
  const what = 'method' in message ? message.method : 'a response';
  return new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target}" did not accept ${what} within ${timeoutMs} ms`, { target, timeoutMs });
}

/**
 * Requests are bounded by the correlator's deadline; a notification or a response has none, so its
 * POST is aborted after the target's timeout: an upstream that never answers must not hold the
 * downstream's own POST (which waits for it) forever.
 */
export function boundPost(controller: { abort(): void }, timeoutMs: number): NodeJS.Timeout {
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  timer.unref();
  return timer;
}

/** The answer was not an MCP body (wrong content type, bad JSON). */
export function toProtocolError(target: string, status: number, reason: string): GatewayError {
  return new GatewayError('GW_UPSTREAM_HTTP_ERROR', `Upstream "${target}" sent an unusable answer: ${reason}`, { target, status, reason });
}
