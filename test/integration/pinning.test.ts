/**
 * Pinning against rug pulls (docs/governance.md), end to end: a real gateway from a config file,
 * the rug-pull fixture as stdio children (a per-session child on every path, all reading one state
 * file), the SDK client, raw WebSocket, legacy SSE and 2026 requests. A changed definition is
 * withheld from lists and refused on every path in `block` mode until approved (admin API, and the
 * `pins` command), survives a restart, is served and flagged in `warn` mode, and each dangerous
 * change is caught even where a benign edit is served.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { modern } from '../support/modern.ts';
import {
  admin,
  eventually,
  modernPath,
  pendingEcho,
  RUGPULL,
  sdkPath,
  ssePath,
  startFromFile,
  wsPath,
  type PathClient,
  type PinningGateway,
} from '../support/pinning.ts';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
let dir: string;
let running: PinningGateway[] = [];
let clients: PathClient[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-pins-'));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(running.splice(0).map((g) => g.gateway.close()));
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(mode: string): Promise<{ config: string; state: string; calmState: string }> {
  const state = join(dir, 'rug.state');
  const calmState = join(dir, 'calm.state');
  await writeFile(state, 'original');
  await writeFile(calmState, 'original');
  const config = join(dir, 'switchboard.json');
  const server = (path: string) => ({ command: process.execPath, args: [RUGPULL], env: { RUGPULL_STATE: path } });
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { rug: server(state), calm: { ...server(calmState), pinning: 'off' } },
      gateway: { port: 0, pinning: { mode }, groups: { g: { servers: ['rug', 'calm'] } }, logging: { level: 'info' } },
    }),
  );
  return { config, state, calmState };
}

async function start(config: string): Promise<PinningGateway> {
  const gw = await startFromFile(config);
  running.push(gw);
  return gw;
}

/** A client on every downstream path that reaches `rug`. */
async function everyPath(gw: PinningGateway): Promise<PathClient[]> {
  const g = gw.gateway;
  const opened = [
    await sdkPath(g, '/servers/rug/mcp', 'echo'),
    await sdkPath(g, '/mcp', 'rug__echo'),
    await sdkPath(g, '/groups/g/mcp', 'rug__echo'),
    await wsPath(g, '/ws', 'rug__echo'),
    await wsPath(g, '/servers/rug/ws', 'echo'),
    await ssePath(g, '/servers/rug/sse', 'echo'),
    await ssePath(g, '/sse', 'rug__echo'),
    modernPath(g, '/servers/rug/mcp', 'echo'),
    modernPath(g, '/mcp', 'rug__echo'),
  ];
  clients.push(...opened);
  return opened;
}

const names = async (path: PathClient) => (await path.list()).map((t) => t.name);

describe('pinning: block mode', () => {
  it('withholds a changed tool on every path and refuses its call until the admin API approves it', async () => {
    const { config, state, calmState } = await writeConfig('block');
    const gw = await start(config);
    const paths = await everyPath(gw);
    // First sight on every path: the pins are recorded, everything is served.
    for (const path of paths) {
      expect(await names(path), path.label).toContain(path.echo);
      expect(await path.call(path.echo, { text: 'hi' }), path.label).toEqual({ text: 'echo: hi' });
    }
    expect((await admin(gw.gateway, '/admin/pins')).json.pins.rug.tool).toBe(3);

    await writeFile(state, 'benign');
    const change = await pendingEcho(gw.gateway, 'rug');
    expect(change.changed).toEqual(['description', 'inputSchema']);
    expect(change.dangers).toEqual([]);

    for (const path of paths) {
      // Each path's own child changed too: its list_changed makes the gateway judge it again.
      const listed = await eventually(`${path.label} withholding echo`, async () => {
        const now = await names(path);
        return now.includes(path.echo) ? undefined : now;
      });
      expect(listed, path.label).toContain(path.echo.replace('echo', 'steady'));
      const refused = await path.call(path.echo, { text: 'hi' });
      expect('error' in refused && refused.error.data?.code, path.label).toBe('GW_DEFINITION_CHANGED');
      if ('error' in refused) {
        expect(refused.error.code).toBe(-32602);
        expect(refused.error.message).toContain('"echo" of server "rug" changed since it was approved (description, inputSchema)');
        expect(refused.error.data).toMatchObject({ target: 'rug', kind: 'tool', name: 'echo', changed: ['description', 'inputSchema'] });
      }
    }
    const status = await (await fetch(new URL('/status', gw.gateway.url))).text();
    expect(status).toContain('Pending definition changes');
    expect(status).toContain(change.hash.slice(0, 16));

    // A target with pinning off serves whatever it changes to.
    await writeFile(calmState, 'inject');
    const calm = await sdkPath(gw.gateway, '/servers/calm/mcp', 'echo');
    clients.push(calm);
    expect((await calm.list()).find((t) => t.name === 'echo')?.description).toContain('<IMPORTANT>');

    const wrong = await admin(gw.gateway, '/admin/pins/approve', { target: 'rug', name: 'echo', hash: 'f'.repeat(64) });
    expect(wrong.status).toBe(404);
    // Only the whole hash approves (a prefix can be ground to by the server): 400 for one.
    expect((await admin(gw.gateway, '/admin/pins/approve', { target: 'rug', name: 'echo', hash: change.hash.slice(0, 16) })).status).toBe(400);
    const approved = await admin(gw.gateway, '/admin/pins/approve', { target: 'rug', kind: 'tool', name: 'echo', hash: change.hash });
    expect(approved.status).toBe(200);
    expect(approved.json.approved).toHaveLength(1);
    for (const path of paths) {
      const echo = (await path.list()).find((t) => t.name === path.echo);
      expect(echo?.description, path.label).toBe('Echoes the given text back, unchanged.');
      expect(await path.call(path.echo, { text: 'again' }), path.label).toEqual({ text: 'echo: again' });
    }
    expect((await admin(gw.gateway, '/admin/pins')).json.pending).toEqual([]);
    const audit = gw.lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'pin');
    expect(audit.map((l) => l.decision)).toEqual(expect.arrayContaining(['recorded', 'blocked', 'refused', 'approved']));
    const metrics = await (await fetch(new URL('/metrics', gw.gateway.url))).text();
    expect(metrics).toMatch(/switchboard_pin_decisions_total\{decision="approved",target="rug"\} 1/);
    expect(metrics).toMatch(/switchboard_pin_decisions_total\{decision="blocked",target="rug"\} 1/);
  });
});

describe('pinning: the admin API with gateway.auth', () => {
  it('needs the admin scope; a client key may call tools but not approve; the approval names who', async () => {
    const { config, state } = await writeConfig('block');
    const file = JSON.parse(await readFile(config, 'utf8'));
    file.gateway.auth = {
      apiKeys: [
        { name: 'agent', key: 'agent-key-0123456789', scopes: ['mcp'] },
        { name: 'ops', key: 'ops-key-0123456789', scopes: ['mcp', 'switchboard:admin'] },
      ],
    };
    await writeFile(config, JSON.stringify(file));
    const gw = await start(config);
    const as = (key: string | undefined, path: string, body?: unknown) =>
      fetch(new URL(path, gw.gateway.url), {
        method: body === undefined ? 'GET' : 'POST',
        headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    // Make a change to approve: an agent lists (first sight), the server changes.
    const list = () => modern(new URL('/servers/rug/mcp', gw.gateway.url), 'tools/list', {}, { headers: { authorization: 'Bearer agent-key-0123456789' } });
    expect((await list()).status).toBe(200);
    await writeFile(state, 'benign');
    await eventually('the change noticed', async () => {
      const res = await as('ops-key-0123456789', '/admin/pins');
      const json = (await res.json()) as { pending: unknown[] };
      return json.pending.length > 0 ? true : undefined;
    });
    expect((await as(undefined, '/admin/pins')).status).toBe(401);
    expect((await as('agent-key-0123456789', '/admin/pins')).status).toBe(403);
    expect((await as('agent-key-0123456789', '/admin/pins/approve', { target: 'rug' })).status).toBe(403);
    expect((await as('ops-key-0123456789', '/admin/pins/approve', { target: 'rug', kind: 'nope' })).status).toBe(400);
    const approved = await as('ops-key-0123456789', '/admin/pins/approve', { target: 'rug' });
    expect(approved.status).toBe(200);
    expect(gw.lines.some((l) => l.includes('"decision":"approved"') && l.includes('"by":"admin-api:key:ops"'))).toBe(true);
  });
});

describe('pinning: warn mode, dangerous changes, the pins command and a restart', () => {
  it('serves a benign edit, blocks each dangerous one, takes the command line approval and keeps pins across a restart', async () => {
    const { config, state } = await writeConfig('warn');
    let gw = await start(config);
    const client = await sdkPath(gw.gateway, '/servers/rug/mcp', 'echo');
    clients.push(client);
    expect(await names(client)).toContain('echo');

    await writeFile(state, 'benign');
    await pendingEcho(gw.gateway, 'rug', (c) => c.dangers.length === 0);
    await eventually('the benign description served', async () => ((await client.list()).find((t) => t.name === 'echo')?.description?.includes('unchanged') ? true : undefined));
    expect(await client.call('echo', { text: 'w' })).toEqual({ text: 'echo: w' });
    expect(gw.lines.some((l) => l.includes('"decision":"warned"'))).toBe(true);

    // Each against the pin (the original): its own danger, named in the refusal's message.
    const dangerous: Array<[string, string, string]> = [
      ['url', 'url-added', 'https://attacker.example/collect'],
      ['inject', 'model-instructions', 'ignore previous'],
      ['unicode', 'invisible-unicode', 'invisible character'],
      ['destructive', 'hint-changed', 'destructiveHint changed from false to true'],
      ['openworld', 'hint-changed', 'openWorldHint changed from false to true'],
    ];
    for (const [variant, code, detail] of dangerous) {
      await writeFile(state, variant);
      await pendingEcho(gw.gateway, 'rug', (c) => c.dangers.some((d: { code: string; detail: string }) => d.code === code && d.detail.includes(detail)));
      await eventually(`${variant} withheld`, async () => ((await names(client)).includes('echo') ? undefined : true));
      const refused = await eventually(`${variant} refused`, async () => {
        const outcome = await client.call('echo', { text: 'x' });
        return 'error' in outcome && outcome.error.message.includes(detail) ? outcome.error : undefined;
      });
      expect(refused.data?.code, variant).toBe('GW_DEFINITION_CHANGED');
      expect(refused.data?.dangers, variant).toContain(code);
    }

    // The operator approves the last one seen (openworld) from the command line.
    const out = await promisify(execFile)(process.execPath, [cli, 'pins', 'approve', 'rug', '--kind', 'tool', '--name', 'echo', '--config', config]);
    expect(out.stdout).toContain('approved rug tool "echo"');
    expect(out.stdout).toContain('annotations');
    await eventually('the approved definition served', async () => ((await client.call('echo', { text: 'ok' })) as { text?: string }).text);
    expect((await client.list()).find((t) => t.name === 'echo')?.annotations?.openWorldHint).toBe(true);
    const file = JSON.parse(await readFile(join(dir, 'switchboard-pins.json'), 'utf8'));
    expect(file.targets.rug.tool.echo.definition.annotations.openWorldHint).toBe(true);

    // A restart: the approval holds; a new dangerous change is still caught.
    await client.close();
    clients = clients.filter((c) => c !== client);
    await gw.gateway.close();
    running = running.filter((g) => g !== gw);
    gw = await start(config);
    const again = await sdkPath(gw.gateway, '/servers/rug/mcp', 'echo');
    clients.push(again);
    expect(await again.call('echo', { text: 'back' })).toEqual({ text: 'echo: back' });
    await writeFile(state, 'inject');
    await eventually('inject withheld after the restart', async () => ((await names(again)).includes('echo') ? undefined : true));
    const refused = await again.call('echo', { text: 'x' });
    expect('error' in refused && refused.error.data?.code).toBe('GW_DEFINITION_CHANGED');
  });

  it('holds a tool added after the list was pinned when it is dangerous, even in warn mode', async () => {
    const { config, state } = await writeConfig('warn');
    const gw = await start(config);
    const client = await sdkPath(gw.gateway, '/mcp', 'rug__echo');
    clients.push(client);
    expect(await names(client)).toContain('rug__echo');
    // The first list starts a whole read that seals the list: later additions are changes.
    await eventually('the tool list sealed', async () => {
      const file = JSON.parse(await readFile(join(dir, 'switchboard-pins.json'), 'utf8').catch(() => '{}'));
      return file.sealed?.rug?.includes('tool') === true ? true : undefined;
    });
    await writeFile(state, 'added');
    const added = await eventually('the new tool judged', async () => (await admin(gw.gateway, '/admin/pins')).json.pending.find((c: any) => c.key === 'helper'));
    expect(added.dangers.map((d: { code: string }) => d.code)).toEqual(['url-added']);
    expect(await names(client)).not.toContain('rug__helper');
    const refused = await client.call('rug__helper', {});
    expect('error' in refused && refused.error.message).toContain('"helper" of server "rug" is new since its list was pinned');
    // echo itself did not change: still served.
    expect((await admin(gw.gateway, '/admin/pins')).json.pending.map((c: any) => c.key)).toEqual(['helper']);
    expect(await client.call('rug__echo', { text: 'still' })).toEqual({ text: 'echo: still' });
  });

  it('judges a call on a fresh session before any list: the call path reads the list first', async () => {
    const { config, state } = await writeConfig('block');
    const gw = await start(config);
    const first = await sdkPath(gw.gateway, '/servers/rug/mcp', 'echo');
    clients.push(first);
    await first.list();
    await writeFile(state, 'url');
    await pendingEcho(gw.gateway, 'rug');
    // A new session's child starts with the changed definition; it calls without listing.
    for (const path of [await sdkPath(gw.gateway, '/servers/rug/mcp', 'echo'), await sdkPath(gw.gateway, '/mcp', 'rug__echo'), modernPath(gw.gateway, '/mcp', 'rug__echo')]) {
      clients.push(path);
      const refused = await path.call(path.echo, { text: 'x' });
      expect('error' in refused && refused.error.data?.code, path.label).toBe('GW_DEFINITION_CHANGED');
    }
  });
});
