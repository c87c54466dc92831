/**
 * Which names can only mean this machine: the DNS-rebinding checks (guards.ts) and the gateway's
 * own origin (own-origin.ts) both ask.
 */
import { isIPv4, isIPv6 } from 'node:net';

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
