/**
 * A stand-in for the MCP registry (API v0.1) on a loopback port: the server.json documents of
 * test/fixtures/registry, served as ServerResponse and ServerList the way the registry does.
 * Paths under a first segment name a misbehaviour, so one server also plays a broken registry:
 * `/error` answers 500, `/text` plain text, `/shape` JSON of the wrong shape, `/hang` never answers,
 * `/huge` more than any page should be, `/drip` its headers at once and then a byte of a valid
 * answer every 200 ms (a body that takes a minute, past the client's deadline). `extra` documents (a hostile
 * publisher's) are served beside the fixtures. `close()` ends it and every socket still open.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const FOLDER = new URL('../fixtures/registry/', import.meta.url);

export interface RegistryFixture {
  readonly url: string;
  /** Requests seen, as `METHOD path?query`. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** `{{REMOTE_URL}}` in a document becomes `remoteUrl` (the test's own upstream). */
export async function startRegistry(options: { remoteUrl?: string; extra?: ReadonlyArray<{ name: string; version: string }> } = {}): Promise<RegistryFixture> {
  const documents = readdirSync(FOLDER)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(new URL(file, FOLDER), 'utf8').replaceAll('{{REMOTE_URL}}', options.remoteUrl ?? 'http://127.0.0.1:9/mcp')) as { name: string; version: string })
    .concat(options.extra ?? []);
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
    answer(request, response, documents);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const wrap = (server: unknown) => ({ server, _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true, publishedAt: '2026-01-01T00:00:00Z' } } });

function answer(request: IncomingMessage, response: ServerResponse, documents: readonly { name: string; version: string }[]): void {
  const url = new URL(request.url ?? '/', 'http://registry');
  const mode = url.pathname.split('/')[1];
  if (mode === 'hang') return;
  if (mode === 'drip') return drip(response, JSON.stringify({ servers: [], padding: 'x'.repeat(300) }));
  if (mode === 'error') return void response.writeHead(500).end('{"error":"database unavailable"}');
  if (mode === 'text') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
  if (mode === 'shape') return void json(response, 200, { items: [] });
  if (mode === 'huge') return void json(response, 200, { servers: [], padding: 'x'.repeat(5 * 1024 * 1024) });
  if (url.pathname === '/v0.1/servers') {
    const search = url.searchParams.get('search') ?? '';
    const found = documents.filter((d) => d.name.includes(search)).map(wrap);
    return void json(response, 200, { servers: found, metadata: { count: found.length } });
  }
  const match = /^\/v0\.1\/servers\/([^/]+)\/versions\/([^/]+)$/.exec(url.pathname);
  const name = match === null ? undefined : decodeURIComponent(match[1]!);
  const version = match === null ? undefined : decodeURIComponent(match[2]!);
  const document = documents.find((d) => d.name === name && (version === 'latest' || d.version === version));
  if (document === undefined) return void json(response, 404, { error: 'Server not found' });
  json(response, 200, wrap(document));
}

function drip(response: ServerResponse, body: string): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  let at = 0;
  const timer = setInterval(() => {
    if (at >= body.length || response.destroyed) return void (clearInterval(timer), response.end());
    response.write(body[at++]!);
  }, 200);
  response.on('close', () => clearInterval(timer));
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
