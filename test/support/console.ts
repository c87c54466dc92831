/**
 * Helpers of the console tests: a gateway from a real config file with the console on, signed in
 * through the real oidc-provider (test/support/oidc-provider.ts) whose console client is
 * registered dynamically (RFC 7591) for the gateway's callback; and a signed-in cookie for tests
 * that speak HTTP without a browser.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from './gateway.ts';
import type { AuthorizationServer } from './oidc-provider.ts';
import { fileURLToPath } from 'node:url';

export const RUGPULL = fileURLToPath(new URL('../fixtures/rugpull-server.mjs', import.meta.url));
export const HOSTILE = fileURLToPath(new URL('../fixtures/hostile-names-server.mjs', import.meta.url));
export const ALICE_KEY = 'alice-key-0123456789abcdef';
export const BOB_KEY = 'bob-key-0123456789abcdef';
export const ADMIN_KEY = 'admin-key-0123456789abcdef';

/** A port free now (the console's redirect URI must be registered before the gateway listens). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Registers a confidential client for the authorization code flow with `redirectUri`. */
export async function registerClient(issuer: string, redirectUri: string): Promise<{ clientId: string; clientSecret: string }> {
  const res = await fetch(`${issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }),
  });
  const body = (await res.json()) as { client_id?: string; client_secret?: string };
  if (!res.ok || body.client_id === undefined || body.client_secret === undefined) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

export interface ConsoleGateway {
  readonly gateway: RunningGateway;
  readonly lines: string[];
  readonly dir: string;
  readonly state: string;
  /** The config file (the console's check and reload read it). */
  readonly file: string;
  close(): Promise<void>;
}

/** A gateway over `rug` (the rug-pull fixture, pinned in block mode) and `evil` (hostile names), with the console on. */
export async function startConsoleGateway(as: AuthorizationServer, consoleExtra: Record<string, unknown> = {}, extraServers: Record<string, unknown> = {}): Promise<ConsoleGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-console-'));
  const port = await freePort();
  const client = await registerClient(as.issuer, `http://127.0.0.1:${port}/admin/callback`);
  const state = join(dir, 'rug.state');
  await writeFile(state, 'original');
  const file = join(dir, 'switchboard.json');
  const node = process.execPath;
  await writeFile(
    file,
    JSON.stringify({
      mcpServers: { rug: { command: node, args: [RUGPULL], env: { RUGPULL_STATE: state }, pinning: 'block' }, evil: { command: node, args: [HOSTILE] }, ...extraServers },
      gateway: {
        host: '127.0.0.1',
        port,
        pinning: { mode: 'off' },
        logging: { level: 'info' },
        auth: {
          apiKeys: [
            { name: 'alice', key: ALICE_KEY },
            { name: 'bob', key: BOB_KEY },
            { name: 'ops', key: ADMIN_KEY, scopes: ['switchboard:admin'] },
          ],
          jwt: { issuers: [as.issuer], jwksUrl: as.jwksUrl },
        },
        policy: {
          rules: [
            { principals: ['key:alice', 'key:ops'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] },
            { principals: ['key:bob'], servers: ['rug'], tools: ['steady'] },
            { effect: 'deny', principals: ['key:alice'], servers: ['rug'], tools: ['mutate'] },
          ],
        },
        admin: { console: { clientId: client.clientId, clientSecret: client.clientSecret, ...consoleExtra } },
      },
    }),
  );
  const config = await loadConfigFile(file, { env: {} });
  const lines: string[] = [];
  const gateway = await startGateway(config, { logger: createTestLogger('info', lines), env: {}, loadConfig: () => loadConfigFile(file, { env: {} }) });
  return {
    gateway,
    lines,
    dir,
    state,
    file,
    async close() {
      await gateway.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((line) => line.split(';', 1)[0] as string);

/** Signs in over HTTP (no browser): the session cookie (`name=value`) and the page's CSRF token. */
export async function signIn(gw: RunningGateway, as: AuthorizationServer): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(new URL('/admin/login', gw.url), { redirect: 'manual' });
  const location = login.headers.get('location');
  if (location === null) throw new Error(`no redirect from /admin/login: ${login.status}`);
  const loginCookie = cookiesOf(login).join('; ');
  const code = await as.followAuthorization(location);
  const callback = new URL('/admin/callback', gw.url);
  callback.searchParams.set('code', code);
  callback.searchParams.set('state', new URL(location).searchParams.get('state') ?? '');
  const done = await fetch(callback, { headers: { cookie: loginCookie } });
  if (done.status !== 200) throw new Error(`callback answered ${done.status}`);
  const cookie = cookiesOf(done).find((c) => c.startsWith('switchboard_console='));
  if (cookie === undefined) throw new Error('no session cookie');
  const page = await (await fetch(new URL('/admin/', gw.url), { headers: { cookie } })).text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1];
  if (csrf === undefined) throw new Error('no CSRF token on the page');
  return { cookie, csrf };
}
