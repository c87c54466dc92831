/**
 * The console's servers API, as a script uses it (an API key with the admin scope): health,
 * circuit, sessions and the stderr of the last exit per server; restart a server (its sessions
 * end, their clients start over on new children); check the config file on disk and reload it,
 * with the diff of what changes (names only, never values), and an invalid file refused with its
 * problems while the running config stays. Real gateway, real stdio children, real SDK clients.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, ALICE_KEY, startConsoleGateway, type ConsoleGateway } from '../support/console.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { fixture } from '../support/recorder.ts';

const SECRET = 'crashy-secret-value-0123';
let as: AuthorizationServer;
let gw: ConsoleGateway;
const clients: Client[] = [];

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: ['mcp', 'switchboard:admin'] });
  gw = await startConsoleGateway(as, {}, { crashy: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'crash-mid-call'], env: { TOKEN: SECRET } } });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.close();
  await as?.close();
});

const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
  const res = await fetch(new URL(`/admin/api/${path}`, gw.gateway.url), {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const serverOf = async (name: string) => ((await api('GET', 'servers')).body.servers as Array<Record<string, any>>).find((s) => s.name === name)!;

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'console-servers', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.gateway.url), { requestInit: { headers: { authorization: `Bearer ${ALICE_KEY}` } } }));
  clients.push(client);
  return client;
}

describe('servers', () => {
  it('shows the stderr of the last exit (scrubbed), its error, health and circuit', async () => {
    const client = await connect('/servers/crashy/mcp');
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow();
    await expect.poll(async () => (await serverOf('crashy')).stderr?.lines?.join('\n') ?? '', { timeout: 10_000 }).toContain('about to crash');
    const crashy = await serverOf('crashy');
    expect(crashy.lastErrors[0]).toMatchObject({ method: 'tools/call', code: 'GW_UPSTREAM_EXITED' });
    expect(crashy.circuit).toBe('closed');
    expect(JSON.stringify(crashy)).not.toContain(SECRET);
  });

  it('restarts a server: its sessions end, a client starts over on a new child; an unknown server is 404', async () => {
    const client = await connect('/servers/evil/mcp');
    await client.callTool({ name: 'plain', arguments: {} });
    expect((await serverOf('evil')).sessions).toBeGreaterThanOrEqual(1);
    const restarted = await api('POST', 'servers/restart', { name: 'evil' });
    expect(restarted).toMatchObject({ status: 200, body: { restarted: 'evil' } });
    expect(restarted.body.sessionsEnded).toBeGreaterThanOrEqual(1);
    expect((await serverOf('evil')).sessions).toBe(0);
    await expect(client.callTool({ name: 'plain', arguments: {} })).rejects.toThrow();
    const again = await connect('/servers/evil/mcp');
    expect((await again.callTool({ name: 'plain', arguments: {} })).content).toEqual([{ type: 'text', text: 'plain' }]);
    expect((await api('POST', 'servers/restart', { name: 'nope' })).status).toBe(404);
    expect(gw.lines.some((l) => l.includes('"action":"restart-server"') && l.includes('"by":"key:ops"'))).toBe(true);
  });
});

describe('config check and reload', () => {
  it('checks the file on disk: nothing to change, then the diff of an edit (names only), then reloads it', async () => {
    expect((await api('POST', 'config/check')).body).toEqual({ valid: true, diff: { added: [], removed: [], changed: [], sections: [], needRestart: [] } });
    const original = await readFile(gw.file, 'utf8');
    const doc = JSON.parse(original);
    doc.mcpServers.extra = { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] };
    doc.mcpServers.crashy.env.TOKEN = 'another-secret-value-987';
    doc.gateway.policy.rules.push({ principals: ['key:bob'], servers: ['extra'], tools: ['*'] });
    await writeFile(gw.file, JSON.stringify(doc));
    const check = await api('POST', 'config/check');
    expect(check.body).toEqual({ valid: true, diff: { added: ['extra'], removed: [], changed: [{ name: 'crashy', keys: ['env'] }], sections: ['aggregate', 'policy'], needRestart: [] } });
    expect(JSON.stringify(check.body)).not.toContain('secret');
    const reload = await api('POST', 'config/reload');
    expect(reload.body).toMatchObject({ valid: true, reloaded: true, diff: { added: ['extra'] } });
    expect(((await api('GET', 'servers')).body.servers as Array<{ name: string }>).map((s) => s.name)).toContain('extra');
    expect((await api('POST', 'config/check')).body.diff.added).toEqual([]);
  });

  it('an invalid file: its problems, no reload, the running config stays', async () => {
    const doc = JSON.parse(await readFile(gw.file, 'utf8'));
    doc.gateway.port = 'not a port';
    await writeFile(gw.file, JSON.stringify(doc));
    const check = await api('POST', 'config/check');
    expect(check.body.valid).toBe(false);
    expect(String(check.body.problems)).toContain('port');
    const reload = await api('POST', 'config/reload');
    expect(reload).toMatchObject({ status: 200, body: { valid: false, reloaded: false } });
    expect(((await api('GET', 'servers')).body.servers as Array<{ name: string }>).map((s) => s.name)).toContain('extra');
  });
});
