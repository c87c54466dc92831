/**
 * The gateway and the clients of the chain's matrix test (integration/chain-matrix.test.ts): one
 * judged-server target (`files`, fixtures/judged-server.mjs, reading real files under a temporary
 * root) behind every path, every judgment configured, JWTs from the real authorization server.
 * A Driver speaks one path's way (a 2025 session, WebSocket, legacy SSE, 2026 requests) and
 * answers every request as `{ status, body }`, the body being the JSON-RPC answer.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { headerValueOf } from '../../src/jsonrpc/modern.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { jwtAuth } from './auth-server.ts';
import { createTestLogger } from './gateway.ts';
import { openLegacyStream } from './legacy-sse.ts';
import { modern } from './modern.ts';
import type { AuthorizationServer } from './oidc-provider.ts';
import { fixture, rpc, type Recorded } from './recorder.ts';
import { initializeWs, openWs, wsUrl } from './ws-client.ts';

export const MATRIX_SCOPES = ['mcp', 'files:read', 'files:write'];
export const KEY = 'AKIAIOSFODNN7EXAMPLE';
/** Calls of one tool a principal may make (gateway.rateLimits.perTool; it never refills during a test). */
export const TOOL_BURST = 20;
export const TEXTS = { public: 'PUBLIC-TEXT', private: 'PRIVATE-TEXT', secret: 'TOP-SECRET-TEXT' };

export interface Answer {
  readonly status: number;
  readonly body: Record<string, any>;
  readonly challenge: string | null;
}

export interface Driver {
  request(method: string, params: Record<string, unknown>): Promise<Answer>;
  close(): Promise<void>;
}

export interface MatrixGateway {
  readonly gw: RunningGateway;
  readonly root: string;
  readonly audit: string[];
  /** What the `files` children received. */
  received(): Recorded[];
  /** Every body the response hook was asked about. */
  readonly hooked: Record<string, any>[];
  token(client: string, path: string, scope: string): Promise<string>;
  close(): Promise<void>;
}

/** A hook that denies a tools/call whose arguments say `deny-me`, and records what it was asked. */
async function startHook(hooked: Record<string, any>[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const asked = JSON.parse(body) as Record<string, any>;
      hooked.push(asked);
      const deny = asked.phase === 'request' && asked.params?.arguments?.text === 'deny-me';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(deny ? { action: 'deny', reason: 'matrix says no' } : { action: 'allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, server };
}

export async function startMatrixGateway(as: AuthorizationServer): Promise<MatrixGateway> {
  const root = mkdtempSync(join(tmpdir(), 'chain-matrix-'));
  for (const [dir, text] of Object.entries(TEXTS)) {
    mkdirSync(join(root, dir));
    writeFileSync(join(root, dir, 'x.txt'), text);
  }
  const record = join(root, 'received.ndjson');
  writeFileSync(join(root, 'rug.state'), 'original');
  const hooked: Record<string, any>[] = [];
  const hook = await startHook(hooked);
  const audit: string[] = [];
  const files = {
    command: process.execPath,
    args: [fixture('judged-server.mjs'), `--root=${root}`, `--record-to=${record}`],
    overrides: { tools: { delete_file: { name: 'remove' } } },
    hooks: [{ url: hook.url, phase: 'both', methods: ['tools/call'] }],
    redact: { patterns: ['AKIA[0-9A-Z]{16}'] },
    requiredScopes: { tools: { echo: ['files:write'] }, resources: { [`file://${root}/private/*`]: ['files:read'] } },
  };
  const config = parseConfig({
    // A second target, so `/mcp` is an aggregate (one target alone is passed through there).
    mcpServers: {
      files,
      other: { command: process.execPath, args: [fixture('judged-server.mjs'), `--root=${root}`] },
      // The rug pull (fixtures/rugpull-server.mjs): its `echo` changes when `rug.state` does; pinning blocks it.
      rug: { command: process.execPath, args: [fixture('rugpull-server.mjs')], env: { RUGPULL_STATE: join(root, 'rug.state') }, pinning: 'block' },
    },
    gateway: {
      port: 0,
      auth: { jwt: { issuers: [as.issuer], jwksUrl: as.jwksUrl }, scopes: ['mcp'] },
      logging: { level: 'info', audit: 'on' },
      rateLimits: { perTool: { perSecond: 0.001, burst: TOOL_BURST } },
      pinning: { mode: 'off', file: join(root, 'pins.json') },
      groups: { g: { servers: ['files', 'rug'] } },
      policy: {
        rules: [
          { effect: 'allow', principals: ['*'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
          { effect: 'deny', principals: ['*'], servers: ['files'], tools: ['remove'], resources: [`file://${root}/secret/*`] },
        ],
      },
      virtualServers: {
        kit: {
          tools: [
            ...['echo', 'secret', 'limited', 'research'].map((tool) => ({ server: 'files', tool })),
            { server: 'files', tool: 'delete_file', as: 'wipe' },
            { server: 'rug', tool: 'echo', as: 'rug_echo' },
          ],
          resources: [{ server: 'files', uri: `file://${root}/*` }],
        },
      },
    },
  });
  const gw = await startGateway({ ...config, auth: { ...jwtAuth(as, ['mcp']), stepUp: 'http' } }, { logger: createTestLogger('info', audit) });
  return {
    gw,
    root,
    audit,
    hooked,
    received() {
      try {
        return readFileSync(record, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Recorded);
      } catch {
        return [];
      }
    },
    token: (client, path, scope) => as.issue(client, new URL(path, gw.url).href, scope),
    async close() {
      await gw.close();
      await new Promise((resolve) => hook.server.close(resolve));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
let nextId = 1;

/** A 2025 session over Streamable HTTP on `path`. */
export async function sessionDriver(m: MatrixGateway, path: string, token: string): Promise<Driver> {
  const s = await rpc.initialize(new URL(path, m.gw.url), '2025-11-25', bearer(token));
  return {
    async request(method, params) {
      const a = await s.request({ jsonrpc: '2.0', id: nextId++, method, params });
      return { status: a.status, body: a.json, challenge: a.headers.get('www-authenticate') };
    },
    close: async () => void (await s.delete()),
  };
}

/** Independent 2026 requests on `path`. */
export function modernDriver(m: MatrixGateway, path: string, token: string): Driver {
  return {
    async request(method, params) {
      // Mcp-Name as SEP-2243 encodes a value that is not plain ASCII (the look-alike spellings).
      const named = params.name ?? params.uri;
      const headers = { ...bearer(token), ...(typeof named === 'string' ? { 'mcp-name': headerValueOf(named) } : {}) };
      const a = await modern(new URL(path, m.gw.url), method, params, { id: nextId++, headers });
      return { status: a.status, body: a.json, challenge: a.headers.get('www-authenticate') };
    },
    close: async () => undefined,
  };
}

/** A WebSocket on `path` (the token as a subprotocol). */
export async function wsDriver(m: MatrixGateway, path: string, token: string): Promise<Driver> {
  const peer = await openWs(wsUrl(m.gw.url, path), ['mcp', `bearer.${token}`]);
  await initializeWs(peer);
  return {
    async request(method, params) {
      const id = nextId++;
      peer.send({ jsonrpc: '2.0', id, method, params });
      return { status: 200, body: (await peer.until(id)).at(-1) as Record<string, any>, challenge: null };
    },
    close: async () => peer.socket.close(),
  };
}

/** A legacy SSE stream on `path`, each POST with the token. */
export async function sseDriver(m: MatrixGateway, path: string, token: string): Promise<Driver> {
  const stream = await openLegacyStream(new URL(path, m.gw.url), bearer(token));
  const send = async (message: unknown) => {
    const res = await fetch(stream.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify(message) });
    await res.arrayBuffer();
  };
  await send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } });
  await stream.nextMessage();
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    async request(method, params) {
      const id = nextId++;
      await send({ jsonrpc: '2.0', id, method, params });
      // Notifications (list_changed, progress) share the stream: the answer is the message with its id.
      for (;;) {
        const message = await stream.nextMessage();
        if (message.id === id) return { status: 200, body: message, challenge: null };
      }
    },
    close: async () => stream.close(),
  };
}
