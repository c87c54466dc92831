/**
 * A gateway with per-tool step-up for tests: recorder targets `files`, whose `ech*` tools need
 * `files:write`, `other`, which needs nothing more, and `late`, as `files` but answering its
 * initialize after 1.5 s (so an aggregate's routing outlasts the second after which a response
 * turns into SSE), and server-everything, whose `simple-*` prompts and `demo://resource/dynamic/*`
 * resources need `files:admin`; groups `g` of `files` and `lateg` of `late`; JWTs from the real authorization
 * server (oidc-provider); every `files` and `late` child recording what it received to one file,
 * so a test can prove what never reached the upstream.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthConfig, GatewayConfig, RequiredScopesConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig } from './aggregate.ts';
import { jwtAuth } from './auth-server.ts';
import { createTestLogger, everythingServer } from './gateway.ts';
import type { AuthorizationServer } from './oidc-provider.ts';
import { fixture, type Recorded } from './recorder.ts';

export const SCOPES = ['mcp', 'files:write', 'files:admin'];
const ECHO_NEEDS_WRITE: RequiredScopesConfig = { tools: { 'ech*': ['files:write'] }, prompts: {}, resources: {} };

export interface StepUpGateway {
  readonly gw: RunningGateway;
  /** The config it runs (for reload tests). */
  readonly config: GatewayConfig;
  /** Every message the `files` children received, in order. */
  received(): Recorded[];
  /** A token of `client` for `path` of this gateway with `scope`. */
  token(client: string, path: string, scope: string): Promise<string>;
  close(): Promise<void>;
}

export async function startStepUpGateway(as: AuthorizationServer, stepUp: 'http' | 'jsonrpc', logLines?: string[]): Promise<StepUpGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'step-up-'));
  const file = join(dir, 'files.ndjson');
  const recorder = (...args: string[]) => ({ command: process.execPath, args: [fixture('recorder-server.mjs'), ...args] });
  const targets = { files: recorder(`--record-to=${file}`), other: recorder(), late: recorder(`--record-to=${file}`, '--init-delay-ms=1500'), everything: everythingServer() };
  const base = buildAggregateConfig({ targets, groups: { g: ['files'], lateg: ['late'] }, ...(logLines ? { logLines } : {}) });
  const auth: AuthConfig = { ...jwtAuth(as, ['mcp']), stepUp };
  const config: GatewayConfig = {
    ...base,
    auth,
    requiredScopes: new Map<string, RequiredScopesConfig>([
      ['files', ECHO_NEEDS_WRITE],
      ['late', ECHO_NEEDS_WRITE],
      ['everything', { tools: {}, prompts: { 'simple-*': ['files:admin'] }, resources: { 'demo://resource/dynamic/*': ['files:admin'] } }],
    ]),
  };
  const gw = await startGateway(config, { logger: createTestLogger(logLines ? 'debug' : 'silent', logLines) });
  return {
    gw,
    config,
    received() {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return [];
      }
      return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Recorded);
    },
    token: (client, path, scope) => as.issue(client, new URL(path, gw.url).href, scope),
    async close() {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `tools/call`s the `files` children received whose arguments' text contains `marker`. */
export function callsMarked(received: Recorded[], marker: string): Recorded[] {
  return received.filter((m) => m.method === 'tools/call' && JSON.stringify(m.params?.arguments ?? {}).includes(marker));
}
