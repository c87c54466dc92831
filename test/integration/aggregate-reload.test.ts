/**
 * Config reload of aggregate endpoints: in-process (what a reload does to live and new sessions),
 * and through the real command (SIGHUP, a change to the file, an invalid file ignored).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAggregateConfig, colliderServer, connectClient, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { recorderServer } from '../support/recorder.ts';

describe('reload, in process', () => {
  it('live sessions get list_changed and the new targets; a removed target finishes its in-flight call first; new sessions see the new config', async () => {
    const gw = await startAggregateGateway({ targets: { col: colliderServer(), rec: recorderServer() }, groups: { g: ['rec'] } });
    try {
      const client = await connectClient(gw);
      const before = (await client.listTools()).tools.map((t) => t.name);
      expect(before).toEqual(expect.arrayContaining(['col__echo', 'rec__echo']));
      const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      let progressed!: () => void;
      const started = new Promise<void>((resolve) => (progressed = resolve));
      // In flight on `rec` while it is removed: it must still complete.
      const slow = client.callTool({ name: 'rec__slow', arguments: { ms: 1_500, steps: 3 } }, undefined, { onprogress: () => progressed() });
      await started;

      gw.reload(buildAggregateConfig({ targets: { col: colliderServer(), fresh: colliderServer('--page-size=50') }, groups: { g: ['fresh'] } }));
      await changed;
      expect(textOf(await slow)).toBe('done');

      const after = (await client.listTools()).tools.map((t) => t.name);
      expect(after).toEqual(expect.arrayContaining(['col__echo', 'fresh__echo']));
      expect(after.some((n) => n.startsWith('rec__'))).toBe(false);
      await expect(client.callTool({ name: 'rec__echo', arguments: { text: 'x' } })).rejects.toThrow('Unknown tool: rec__echo');
      expect(textOf(await client.callTool({ name: 'fresh__echo', arguments: { message: 'new' } }))).toBe('collider echo: new');
      await client.close();

      const later = await connectClient(gw);
      expect((await later.listTools()).tools.some((t) => t.name.startsWith('rec__'))).toBe(false);
      await later.close();
      // The group follows the reload too.
      const grouped = await connectClient(gw, '/groups/g/mcp');
      const names = (await grouped.listTools()).tools.map((t) => t.name);
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((n) => n.startsWith('fresh__'))).toBe(true);
      await grouped.close();
      // A removed target's own path refuses new sessions; a kept one still serves.
      const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const removed = await fetch(new URL('/servers/rec/mcp', gw.url), { method: 'POST', headers, body: initialize });
      expect(removed.status).toBe(404);
      expect(await removed.json()).toMatchObject({ error: { data: { code: 'GW_ROUTE_NOT_FOUND' } } });
      const kept = await fetch(new URL('/servers/col/mcp', gw.url), { method: 'POST', headers, body: initialize });
      expect(kept.status).toBe(200);
      await kept.arrayBuffer();
    } finally {
      await gw.close();
    }
  });
});

const root = fileURLToPath(new URL('../../', import.meta.url));
const collider = join(root, 'test', 'fixtures', 'collider-server.mjs');

describe('reload, through the command', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-reload-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.on('close', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  const configText = (servers: string[]) =>
    JSON.stringify({
      mcpServers: Object.fromEntries(servers.map((name) => [name, { command: process.execPath, args: [collider] }])),
      gateway: { port: 0, logging: { level: 'info' } },
    });

  it('applies a changed file and SIGHUP to live sessions, and ignores an invalid file (logged)', async () => {
    const path = join(dir, 'switchboard.json');
    await writeFile(path, configText(['a', 'b']));
    child = spawn(process.execPath, [join(root, 'src', 'cli.ts'), '--config', path], { cwd: root });
    let out = '';
    const waiters: Array<{ text: string; from: number; resolve: () => void }> = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      for (const w of [...waiters]) {
        if (out.indexOf(w.text, w.from) !== -1) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    /** Resolves when `text` appears in stdout after what has been seen so far. */
    const next = (text: string) => {
      const from = out.length;
      return new Promise<void>((resolve) => waiters.push({ text, from, resolve }));
    };
    await next('"MCP endpoints');
    const url = /"endpoints":\["([^"]+)\/mcp"/.exec(out)?.[1] as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const gateway = { url, port: 0, close: async () => undefined, reload: () => undefined };
    const client = await connectClient(gateway);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('b__echo');

    // A change to the file: `c` replaces `b`.
    let changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    let reloaded = next('"config reloaded"');
    await writeFile(path, configText(['a', 'c']));
    await reloaded;
    await changed;
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('c__echo');
    expect(names.some((n) => n.startsWith('b__'))).toBe(false);

    // An invalid file is refused and the running config stays.
    const failed = next('config reload failed; keeping the running config');
    await writeFile(path, '{"mcpServers": {"a": {"command": 42}}}');
    await failed;
    expect(textOf(await client.callTool({ name: 'c__echo', arguments: { message: 'kept' } }))).toBe('collider echo: kept');

    // SIGHUP reloads too: the file was fixed meanwhile (that change reloads it by itself; wait for it).
    changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    reloaded = next('"config reloaded"');
    await writeFile(path, configText(['a', 'c', 'd']));
    await reloaded;
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('d__echo');
    // Now the file does not change: only the signal can cause this reload.
    reloaded = next('"config reloaded"');
    child.kill('SIGHUP');
    await reloaded;
    expect(child.exitCode).toBeNull();
    expect(textOf(await client.callTool({ name: 'd__echo', arguments: { message: 'after SIGHUP' } }))).toBe('collider echo: after SIGHUP');
    await client.close();
  });
});
