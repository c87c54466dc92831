/**
 * The gateway's own origin, as a request names it: which `Host` headers mean this gateway, and
 * the origin (`http://127.0.0.1:8080`) each one stands for. Token audiences (RFC 8707), the
 * `resource` of the protected-resource metadata (RFC 9728) and the `resource_metadata` pointer
 * are built from it, so it must never be something a client chose: a Host naming another port or
 * another name is not this gateway, and a token minted for whatever listens there must not open
 * anything here (docs/security.md).
 *
 * Which Hosts are the gateway's own (docs/configuration.md `allowedHosts`):
 * - `gateway.allowedHosts`: an entry with a port (`mcp.example.com:443`) is that exact name and
 *   port; an entry without one (`mcp.example.com`) is that name without a port (a proxy on the
 *   scheme's default port, as a client calling `https://mcp.example.com` sends it) or with the
 *   port the gateway actually listens on, never any other port.
 * - unset, listening on loopback: a loopback name (loopback.ts `isLoopbackAddress`) with the port
 *   the gateway actually listens on (a Host without a port means 80).
 * - unset, listening beyond loopback: the gateway cannot know its names, so every Host is let
 *   through and stands for itself; main.ts refuses to start JWT authentication that way (an
 *   audience would then be the client's word).
 */
import { isLoopbackAddress } from './loopback.ts';

/** A Host header split into its name (lower case, IPv6 kept in brackets) and port. */
interface HostParts {
  readonly name: string;
  readonly port: number | undefined;
}

const PORT = /^\d{1,5}$/;

/** Parsed, never matched by prefix; undefined for anything that is not `name[:port]`. */
export function parseHost(host: string): HostParts | undefined {
  let name: string;
  let rest: string;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end === -1) return undefined;
    name = host.slice(0, end + 1);
    rest = host.slice(end + 1);
  } else {
    const colon = host.indexOf(':');
    name = colon === -1 ? host : host.slice(0, colon);
    rest = colon === -1 ? '' : host.slice(colon);
  }
  if (name === '' || /[\s/@\\?#]/.test(name)) return undefined;
  if (rest === '') return { name: name.toLowerCase(), port: undefined };
  const port = rest.slice(1);
  if (rest[0] !== ':' || !PORT.test(port) || Number(port) > 65_535) return undefined;
  return { name: name.toLowerCase(), port: Number(port) };
}

export interface OwnOrigin {
  /** False when nothing restricts Host (beyond loopback without `allowedHosts`). */
  readonly checked: boolean;
  /**
   * The origin `host` stands for when it names this gateway; undefined when it does not (or is
   * missing), which the Host check answers with 403.
   */
  of(host: string | undefined): string | undefined;
}

/** `port()`: the port the gateway actually listens on (known once it listens). */
export function createOwnOrigin(allowedHosts: readonly string[] | undefined, listenHost: string, port: () => number): OwnOrigin {
  const entries = allowedHosts?.map((entry) => parseHost(entry)).filter((e): e is HostParts => e !== undefined);
  const loopback = entries === undefined && isLoopbackAddress(listenHost);
  const checked = entries !== undefined || loopback;

  const isOwn = (parts: HostParts): boolean => {
    if (entries === undefined) return !loopback || (isLoopbackAddress(parts.name) && (parts.port ?? 80) === port());
    return entries.some((e) => e.name === parts.name && (e.port !== undefined ? e.port === parts.port : parts.port === undefined || parts.port === port()));
  };

  // A client sends the same Host on every request: remember the answer for the last one seen.
  let lastHost: string | undefined;
  let lastOrigin: string | undefined;
  const resolve = (host: string): string | undefined => {
    const parts = parseHost(host);
    if (parts === undefined) return checked ? undefined : `http://${host}`;
    if (!isOwn(parts)) return undefined;
    try {
      return new URL(`http://${parts.name}${parts.port === undefined ? '' : `:${parts.port}`}`).origin;
    } catch {
      return checked ? undefined : `http://${host}`;
    }
  };
  return {
    checked,
    of(host) {
      if (host === undefined) return checked ? undefined : 'http://localhost';
      if (host !== lastHost) {
        lastOrigin = resolve(host);
        lastHost = host;
      }
      return lastOrigin;
    },
  };
}
