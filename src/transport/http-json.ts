/**
 * Small JSON exchanges with an authorization server, outside any MCP session: fetching a JWKS
 * (GET) and a token request (POST of a form, RFC 6749 section 3.2). Bounded: a deadline for the
 * whole exchange and a cap on the body read, so a slow or chatty server cannot hold the gateway.
 * Only this layer may touch undici; auth/ and upstream/ call these.
 */
import { request } from 'undici';
import { readHead, type ReadableBody } from './http-body.ts';

export interface JsonExchange {
  readonly status: number;
  /** The parsed body; undefined when it was not JSON (or larger than the cap). */
  readonly body: unknown;
  /** The `Cache-Control` header ('' when absent). */
  readonly cacheControl: string;
}

export interface JsonExchangeOptions {
  /** The whole exchange, headers and body (default 5 s). */
  timeoutMs?: number;
  /** Bytes of body read at most (default 1 MiB); a larger body counts as not JSON. */
  maxBytes?: number;
}

async function exchange(url: string, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, options: JsonExchangeOptions): Promise<JsonExchange> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const res = await request(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
  const text = await readHead(res.body as unknown as ReadableBody, maxBytes + 1);
  const header = res.headers['cache-control'];
  const cacheControl = Array.isArray(header) ? header.join(', ') : (header ?? '');
  let body: unknown;
  if (text.length <= maxBytes) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status: res.statusCode, body, cacheControl };
}

/** GET `url` expecting JSON. Rejects only when no HTTP exchange took place (refused, timeout). */
export function getJson(url: string, options: JsonExchangeOptions = {}): Promise<JsonExchange> {
  return exchange(url, { method: 'GET', headers: { accept: 'application/json' } }, options);
}

/** POST a form to `url` expecting JSON (a token endpoint). `headers` may carry client authentication. */
export function postForm(url: string, form: URLSearchParams, headers: Record<string, string>, options: JsonExchangeOptions = {}): Promise<JsonExchange> {
  return exchange(url, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form.toString() }, options);
}

/** `max-age` of a Cache-Control value in seconds; 0 for `no-store`/`no-cache`; undefined when absent. */
export function maxAgeOf(cacheControl: string): number | undefined {
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  for (const d of directives) {
    const match = /^max-age="?(\d+)"?$/.exec(d);
    if (match) return Number(match[1]);
  }
  return undefined;
}
