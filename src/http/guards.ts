/**
 * Request checks that need no session: Origin and Host (DNS-rebinding protection, 2025-11-25
 * "Security Warning": invalid Origin -> 403), and the media types of Streamable HTTP.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayConfig } from '../config/types.ts';
import { corsAllows } from './cors.ts';

/**
 * Is `host` (a hostname as it appears in a Host header, an Origin URL or `listen.host`) a name
 * that can only mean this machine? Parsed, never matched by prefix: `127.0.0.1.evil.com` is a DNS
 * name an attacker controls, which is exactly what DNS rebinding uses. Accepted:
 * - `localhost` and names under it (RFC 6761 §6.3: they resolve to loopback and never to the
 *   network), with or without the trailing root dot, in any case;
 * - an IPv4 literal in 127.0.0.0/8, written as four decimal octets (the only form a browser puts
 *   in Host and Origin; `127.1` or `0x7f.0.0.1` are refused rather than guessed at);
 * - the IPv6 loopback `::1` in any spelling (`[::1]`, `[0:0:0:0:0:0:0:1]`) and the IPv4-mapped
 *   form of a 127/8 address (`[::ffff:127.0.0.1]`). A zone id (`%lo`) is refused.
 */
export function isLoopbackAddress(host: string): boolean {
  let name = host.toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === 'localhost' || name.endsWith('.localhost')) return !name.startsWith('.');
  if (isIPv4(name)) return name.startsWith('127.');
  if (isIPv6(name)) return isLoopbackIPv6(name);
  return false;
}

function isLoopbackIPv6(address: string): boolean {
  // Expand through the URL parser, which writes every IPv6 literal in one canonical form.
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname;
  } catch {
    return false;
  }
  if (canonical === '[::1]') return true;
  // IPv4-mapped: [::ffff:7f00:1] is 127.0.0.1.
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(canonical);
  return mapped !== null && mapped[1] !== undefined && parseInt(mapped[1], 16) >> 8 === 127;
}

/**
 * Hostname of a Host header value (`example.com:8080` -> `example.com`, `[::1]:80` -> `[::1]`).
 * A bracketed name followed by anything but `:port` yields the whole value, which then matches
 * nothing.
 */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end === -1) return host;
    const rest = host.slice(end + 1);
    return rest === '' || /^:\d*$/.test(rest) ? host.slice(0, end + 1) : host;
  }
  const colon = host.indexOf(':');
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

export interface OriginPolicy {
  /** Throws GW_FORBIDDEN_ORIGIN / GW_FORBIDDEN_HOST when the request must be refused. */
  check(headers: IncomingHttpHeaders): void;
}

export function createOriginPolicy(config: GatewayConfig): OriginPolicy {
  const origins = config.allowedOrigins === undefined ? undefined : new Set(config.allowedOrigins);
  const anyOrigin = origins?.has('*') ?? false;
  const hosts = config.allowedHosts === undefined ? undefined : new Set(config.allowedHosts.map((h) => h.toLowerCase()));
  // With no allow-list, Host is checked only when we listen on loopback: that is the setup a
  // DNS-rebinding page can reach, and there only loopback names are legitimate.
  const loopbackOnly = hosts === undefined && isLoopbackAddress(config.listen.host);

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
      if (hosts !== undefined || loopbackOnly) {
        if (host === undefined) throw new GatewayError('GW_FORBIDDEN_HOST', 'Forbidden: missing Host header');
        const name = hostnameOf(host);
        const ok = hosts !== undefined ? hosts.has(host.toLowerCase()) || hosts.has(name) : isLoopbackAddress(name);
        if (!ok) throw new GatewayError('GW_FORBIDDEN_HOST', `Forbidden: Host ${JSON.stringify(host)} is not allowed`);
      }
      const origin = headers.origin;
      if (origin !== undefined && !originAllowed(origin)) {
        throw new GatewayError('GW_FORBIDDEN_ORIGIN', `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
      }
    },
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
