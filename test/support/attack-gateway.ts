/**
 * The gateway of the outside probe's hostile-server tests (integration/attack-hostile-*.test.ts):
 * fixtures/attacker-server.mjs as `hostile` (redaction, pinning `block`, a policy deny on a prompt
 * and a folder, a group, two virtual servers) beside a plain second target (so `/mcp` is an
 * aggregate), API keys, audit lines kept in memory.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import type { Answer, MatrixGateway } from './chain-matrix.ts';
import { createTestLogger } from './gateway.ts';
import { fixture, type Recorded } from './recorder.ts';

export const KEY = 'AKIAIOSFODNN7EXAMPLE';
export const ALICE = 'alice-attack-key-0123456789abcdef';
/** A caller with no 2026 host yet (tasks, SEP-2663: the extension a host was opened with is the one its upstream saw). */
export const CAROL = 'carol-attack-key-0123456789abcdef';
export const ROOT = '/srv/attack';

export interface HostileGateway {
  readonly gw: RunningGateway;
  readonly audit: string[];
  /** What the hostile children received. */
  received(): Recorded[];
  /** The gateway as the chain-matrix drivers take it (they read only its URL). */
  matrix(): MatrixGateway;
  /** An SDK v1 client on `path` as Alice, answering sampling and elicitation it declares; `seen`: what it was asked. */
  sdkClient(path: string, capabilities: Record<string, unknown>): Promise<{ client: Client; seen: unknown[] }>;
  close(): Promise<void>;
}

export const errorOf = (a: Answer) => a.body.error as { code: number; data?: Record<string, any> } | undefined;

export async function startHostileGateway(): Promise<HostileGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'attack-hostile-'));
  const audit: string[] = [];
  const hostile = { command: process.execPath, args: [fixture('attacker-server.mjs'), `--root=${ROOT}`, `--record-to=${join(dir, 'received.ndjson')}`], pinning: 'block', redact: { patterns: ['AKIA[0-9A-Z]{16}'] } };
  const config = parseConfig({
    mcpServers: { hostile, other: { command: process.execPath, args: [fixture('judged-server.mjs'), '--root=/nonexistent-other'] } },
    gateway: {
      port: 0,
      auth: { apiKeys: [{ name: 'alice', key: ALICE }, { name: 'carol', key: CAROL }] },
      logging: { level: 'info', audit: 'on' },
      pinning: { mode: 'off', file: join(dir, 'pins.json') },
      groups: { g: { servers: ['hostile'] } },
      policy: {
        rules: [
          { effect: 'allow', principals: ['*'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
          { effect: 'deny', principals: ['*'], servers: ['hostile'], prompts: ['admin_*'], resources: [`file://${ROOT}/secret/*`] },
        ],
      },
      virtualServers: {
        v: {
          tools: ['echo', 'ask_sample', 'ask_elicit', 'leak', 'leak_big'].map((tool) => ({ server: 'hostile', tool })),
          prompts: [{ server: 'hostile', prompt: 'greet' }, { server: 'hostile', prompt: 'admin_secret', as: 'boss' }],
          resources: [{ server: 'hostile', uri: `file://${ROOT}/*` }],
        },
        // Picks only the public folder: no spelling reaches beside it.
        pub: { resources: [{ server: 'hostile', uri: `file://${ROOT}/public/*` }] },
      },
    },
  });
  const gw = await startGateway(config, { logger: createTestLogger('info', audit) });
  return {
    gw,
    audit,
    received: () => readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded),
    matrix: () => ({ gw }) as unknown as MatrixGateway,
    async sdkClient(path, capabilities) {
      const client = new Client({ name: 'probe', version: '1' }, { capabilities });
      const seen: unknown[] = [];
      if ('sampling' in capabilities) {
        client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
          seen.push(request.params);
          return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'probe' };
        });
      }
      if ('elicitation' in capabilities) {
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          seen.push(request.params);
          return { action: 'accept', content: { ok: true } };
        });
      }
      await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
      return { client, seen };
    },
    async close() {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
