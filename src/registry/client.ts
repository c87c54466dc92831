/**
 * Reads the MCP registry's API (v0.1): `GET /v0.1/servers?search=` and
 * `GET /v0.1/servers/<name>/versions/<version|latest>`. Bounded: one deadline per request, a cap on
 * the body, and every way a registry can answer badly (refused, timed out, an error status, not
 * JSON, not the schema) is a RegistryError whose message says what happened and where.
 */
import type { z } from 'zod';
import { serverListSchema, serverResponseSchema, type ServerList, type ServerResponse } from './server-json.ts';

/** The official registry; `--registry` or SWITCHBOARD_REGISTRY_URL name another (a mirror, a company's own). */
export const DEFAULT_REGISTRY_URL = 'https://registry.modelcontextprotocol.io';
/** 10 s: a registry answers a search in well under a second; a hung one should not hang the command. */
const TIMEOUT_MS = 10_000;
/** 4 MiB: a page of 100 servers is a few hundred KiB; more is a broken or hostile registry. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class RegistryError extends Error {
  override name = 'RegistryError';
}

export interface RegistryClientOptions {
  readonly baseUrl: string;
  readonly timeoutMs?: number;
}

/** Servers whose name contains `text` (the registry's own substring search), latest versions only. */
export async function searchServers(options: RegistryClientOptions, text: string, limit = 30): Promise<ServerList> {
  const url = endpoint(options.baseUrl, '/v0.1/servers');
  url.searchParams.set('search', text);
  url.searchParams.set('version', 'latest');
  url.searchParams.set('limit', String(limit));
  return getJson(url, serverListSchema, options);
}

/** One server.json; `version` undefined is the latest. A registry's 404 says the name is unknown. */
export async function getServer(options: RegistryClientOptions, name: string, version?: string): Promise<ServerResponse> {
  const path = `/v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version ?? 'latest')}`;
  return getJson(endpoint(options.baseUrl, path), serverResponseSchema, options, `no server "${name}"${version === undefined ? '' : ` at version ${version}`}`);
}

function endpoint(baseUrl: string, path: string): URL {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new RegistryError(`registry URL "${baseUrl}" is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new RegistryError(`registry URL "${baseUrl}" must be http(s)`);
  if (base.username !== '' || base.password !== '') throw new RegistryError('registry URL must not carry credentials');
  return new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);
}

async function getJson<S extends z.ZodType>(url: URL, schema: S, options: RegistryClientOptions, notFound?: string): Promise<z.output<S>> {
  const where = `registry ${url.origin}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'follow', signal: AbortSignal.timeout(options.timeoutMs ?? TIMEOUT_MS) });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    throw new RegistryError(timedOut ? `${where} did not answer within ${options.timeoutMs ?? TIMEOUT_MS} ms` : `${where} cannot be reached (${causeOf(error)})`);
  }
  if (response.status === 404 && notFound !== undefined) {
    await response.body?.cancel();
    throw new RegistryError(`${where}: ${notFound}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new RegistryError(`${where} answered HTTP ${response.status} for ${url.pathname}`);
  }
  const body = await readCapped(response, where, options.timeoutMs ?? TIMEOUT_MS);
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new RegistryError(`${where} answered something that is not JSON for ${url.pathname}`);
  }
  const parsed = schema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RegistryError(`${where} answered a document that is not a registry answer (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`);
  }
  return parsed.data;
}

/**
 * The body, at most MAX_BODY_BYTES. The request's deadline covers the body too (the signal aborts
 * the stream): a body dripped past it is the same one-line RegistryError as no answer at all.
 */
async function readCapped(response: Response, where: string, timeoutMs: number): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let read: Awaited<ReturnType<typeof reader.read>>;
    try {
      read = await reader.read();
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new RegistryError(timedOut ? `${where} did not finish its answer within ${timeoutMs} ms` : `${where} broke off its answer (${causeOf(error)})`);
    }
    const { done, value } = read;
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new RegistryError(`${where} answered more than ${MAX_BODY_BYTES / 1024 / 1024} MiB`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}
