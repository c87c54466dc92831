/**
 * Is a remote target reachable? A TCP connect to its URL's host and port, closed at once: it
 * proves the host resolves and something listens, without an MCP exchange (an `initialize` would
 * open an upstream session, and a GET could open a stream). TLS is not negotiated. Used behind
 * /readyz and the Runtime's health snapshot (upstream/target-health.ts), never on a request's path.
 */
import { connect } from 'node:net';
import { toNetworkError } from './http-errors.ts';

export interface Reachability {
  readonly reachable: boolean;
  /** Why not, in the words of GW_UPSTREAM_UNREACHABLE (`connection refused`, `connect timeout`...). */
  readonly reason?: string;
  /** When the probe finished (epoch ms). */
  readonly at: number;
}

function endpointOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  // An IPv6 literal comes bracketed in a URL; the socket wants it bare.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { host, port };
}

/** Connects to `url`'s host and port within `timeoutMs`; never rejects. */
export function probeReachable(url: string, timeoutMs: number): Promise<Reachability> {
  return new Promise((resolve) => {
    let socket: ReturnType<typeof connect>;
    const done = (reachable: boolean, reason?: string) => {
      socket.destroy();
      resolve({ reachable, ...(reason === undefined ? {} : { reason }), at: Date.now() });
    };
    try {
      socket = connect({ ...endpointOf(url), timeout: timeoutMs });
    } catch {
      resolve({ reachable: false, reason: 'invalid address', at: Date.now() });
      return;
    }
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false, 'connect timeout'));
    socket.once('error', (err) => {
      const reason = toNetworkError('', err).details.reason;
      done(false, typeof reason === 'string' ? reason : 'connection failed');
    });
  });
}
