/**
 * The few HTTP exchanges of the gateway as an OAuth client of an upstream's authorization server
 * (upstream/oauth/): the unauthenticated probe whose 401 names the protected resource metadata
 * (RFC 9728 section 5.1), and dynamic client registration (RFC 7591, a JSON POST). Metadata GETs and
 * token POSTs use http-json.ts. Bounded like those: a deadline and a cap on what is read.
 */
import { request } from 'undici';
import { discard, readHead, type ReadableBody } from './http-body.ts';

export interface Challenge {
  readonly status: number;
  /** `WWW-Authenticate`, '' when absent. */
  readonly wwwAuthenticate: string;
}

/** POSTs an `initialize` without credentials, as a client would, and reads only the status and challenge. */
export async function probeChallenge(url: string, timeoutMs = 5_000): Promise<Challenge> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'switchboard', version: '0' } } });
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  await discard(res.body as unknown as ReadableBody);
  const header = res.headers['www-authenticate'];
  return { status: res.statusCode, wwwAuthenticate: Array.isArray(header) ? header.join(', ') : (header ?? '') };
}

/** POSTs JSON (RFC 7591 registration); the answer's status and parsed body (undefined when not JSON). */
export async function postJson(url: string, value: unknown, timeoutMs = 5_000): Promise<{ status: number; body: unknown }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(value),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await readHead(res.body as unknown as ReadableBody, 64 * 1024);
  try {
    return { status: res.statusCode, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.statusCode, body: undefined };
  }
}
