/**
 * Request checks that need no session: Origin and Host (DNS-rebinding protection, 2025-11-25
 * "Security Warning": invalid Origin -> 403), and the media types of Streamable HTTP.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayConfig } from '../config/types.ts';
import { corsAllows } from './cors.ts';
import { isLoopbackAddress } from './loopback.ts';
import { createOwnOrigin } from './own-origin.ts';

export { isLoopbackAddress } from './loopback.ts';

export interface OriginPolicy {
  /** Throws GW_FORBIDDEN_ORIGIN / GW_FORBIDDEN_HOST when the request must be refused. */
  check(headers: IncomingHttpHeaders): void;
  /**
   * The gateway's own origin a request's Host stands for (own-origin.ts): what token audiences,
   * metadata and challenges are built from. Undefined only for a Host `check` refuses.
   */
  originOf(host: string | undefined): string | undefined;
}

/**
 * `port()`: the port the gateway actually listens on (server.ts reads it once listening; with
 * `listen.port: 0` the configured one says nothing).
 */
export function createOriginPolicy(config: GatewayConfig, port: () => number = () => config.listen.port): OriginPolicy {
  const origins = config.allowedOrigins === undefined ? undefined : new Set(config.allowedOrigins);
  const anyOrigin = origins?.has('*') ?? false;
  // With no allow-list, Host is checked only when we listen on loopback: that is the setup a
  // DNS-rebinding page can reach, and there only loopback names at our own port are legitimate.
  const own = createOwnOrigin(config.allowedHosts, config.listen.host, port);

  const cors = config.corsOrigins ?? [];
  const originAllowed = (origin: string): boolean => {
    if (anyOrigin || corsAllows(cors, origin)) return true;
    if (origins !== undefined) return origins.has(origin);
    try {
      return isLoopbackAddress(new URL(origin).hostname);
    } catch {
      return false;
    }
  };

  return {
    check(headers) {
      const host = headers.host;
      if (own.checked && own.of(host) === undefined) {
        if (host === undefined) throw new GatewayError('GW_FORBIDDEN_HOST', 'Forbidden: missing Host header');
        throw new GatewayError('GW_FORBIDDEN_HOST', `Forbidden: Host ${JSON.stringify(host)} is not allowed`);
      }
      const origin = headers.origin;
      if (origin !== undefined && !originAllowed(origin)) {
        throw new GatewayError('GW_FORBIDDEN_ORIGIN', `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
      }
    },
    originOf: (host) => own.of(host),
  };
}

/** Does an Accept header admit `type` (exact, `major/*` or `*\/*`)? */
export function accepts(accept: string | undefined, type: string): boolean {
  if (accept === undefined) return false;
  const major = type.slice(0, type.indexOf('/'));
  for (const part of accept.split(',')) {
    const media = part.split(';', 1)[0]?.trim().toLowerCase();
    if (media === type || media === '*/*' || media === `${major}/*`) return true;
  }
  return false;
}

// A client sends the same Accept on every POST: remember the verdict for the last value seen.
let lastPostAccept: string | undefined;
let lastPostAcceptOk = false;

/** POST: the client must take both JSON and SSE answers (2025-03-26 "Sending Messages to the Server"). */
export function checkPostHeaders(headers: IncomingHttpHeaders): void {
  const accept = headers.accept;
  if (accept !== lastPostAccept || accept === undefined) {
    lastPostAcceptOk = accepts(accept, 'application/json') && accepts(accept, 'text/event-stream');
    lastPostAccept = accept;
  }
  if (!lastPostAcceptOk) {
    throw new GatewayError('GW_NOT_ACCEPTABLE', 'Not Acceptable: Accept must list application/json and text/event-stream');
  }
  const type = headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new GatewayError('GW_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: Content-Type must be application/json');
  }
}

/** GET: the standalone stream is SSE only. */
export function checkGetHeaders(headers: IncomingHttpHeaders): void {
  if (!accepts(headers.accept, 'text/event-stream')) {
    throw new GatewayError('GW_NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream');
  }
}
