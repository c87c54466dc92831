/**
 * /readyz over real sockets: each target's state; remote targets probed with a TCP connect that is
 * cached (a real listener counts the connects, and no HTTP byte reaches it); a refused port is
 * `unreachable`; 503 only when every target is down; stdio targets are never spawned to answer;
 * with gateway.auth the list gives counts, not names; the config generation follows reloads.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, type TestGatewayOptions } from '../support/gateway.ts';
import { fixture } from '../support/recorder.ts';

let dir: string;
let listener: Server;
let connects = 0;
let bytes = 0;
let listening: string;
let refused: string;
const open: RunningGateway[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-readyz-'));
  listener = createServer((socket) => {
    connects++;
    socket.on('data', (chunk) => (bytes += chunk.length));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listening = `http://127.0.0.1:${(listener.address() as { port: number }).port}/mcp`;
  // A port that was free a moment ago: nothing listens there.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  refused = `http://127.0.0.1:${(probe.address() as { port: number }).port}/mcp`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});

afterAll(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function start(options: TestGatewayOptions, extra: Record<string, unknown> = {}): Promise<RunningGateway> {
  const gw = await startGateway({ ...buildConfig(options), ...extra }, { logger: createTestLogger('silent', undefined) });
  open.push(gw);
  return gw;
}

async function readyz(gw: RunningGateway) {
  const res = await fetch(new URL('/readyz', gw.url));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('/readyz', () => {
  it('probes a remote target once per cache period, with a TCP connect only; stdio targets are never spawned', async () => {
    const log = join(dir, 'spawns');
    const gw = await start({
      targets: {
        remote: { type: 'http', url: listening },
        local: { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal', `--spawn-log=${log}`] },
      },
      health: { probeCacheMs: 60_000, probeTimeoutMs: 2_000 },
    });
    const before = connects;
    for (let i = 0; i < 5; i++) {
      expect(await readyz(gw)).toEqual({
        status: 200,
        body: {
          status: 'ready',
          sessions: 0,
          inflight: 0,
          // The config generation (config/generation.ts), in one process too: a reload changes it.
          generation: expect.stringMatching(/^[0-9a-f]{16}$/),
          targets: [
            { name: 'remote', type: 'http', state: 'ready' },
            { name: 'local', type: 'stdio', state: 'unknown' },
          ],
        },
      });
    }
    expect(connects - before).toBe(1);
    expect(bytes).toBe(0);
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('');
  });

  it('a refused port is unreachable: 200 degraded beside a reachable target, 503 down when it is the only one', async () => {
    const both = await start({ targets: { up: { type: 'http', url: listening }, gone: { type: 'sse', url: refused } } });
    const degraded = await readyz(both);
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({
      status: 'degraded',
      targets: [
        { name: 'up', state: 'ready' },
        { name: 'gone', type: 'sse', state: 'unreachable', cause: 'GW_UPSTREAM_UNREACHABLE: connection refused' },
      ],
    });
    // Names and reasons only: never the URL.
    expect(JSON.stringify(degraded.body)).not.toContain('127.0.0.1');

    const alone = await start({ targets: { gone: { type: 'http', url: refused } } });
    expect(await readyz(alone)).toMatchObject({ status: 503, body: { status: 'down', targets: [{ name: 'gone', state: 'unreachable' }] } });
  });

  it('after the cache period the last result is served at once while a new probe runs in the background', async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const gw = await start({ targets: { going: { type: 'http', url } } }, { health: { probeCacheMs: 100, probeTimeoutMs: 2_000 } });
    expect((await readyz(gw)).body).toMatchObject({ status: 'ready', targets: [{ state: 'ready' }] });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise((r) => setTimeout(r, 150));
    // Stale: answered from the last probe, while the next one finds the port closed.
    expect((await readyz(gw)).body).toMatchObject({ targets: [{ state: 'ready' }] });
    await expect.poll(async () => (await readyz(gw)).status, { timeout: 5_000 }).toBe(503);
    expect((await readyz(gw)).body).toMatchObject({ status: 'down', targets: [{ state: 'unreachable', cause: 'GW_UPSTREAM_UNREACHABLE: connection refused' }] });
  });

  it('with gateway.auth (no credential needed for /readyz) it counts states instead of naming targets', async () => {
    const gw = await start({ targets: { up: { type: 'http', url: listening }, gone: { type: 'http', url: refused } } }, { auth: keyAuth({ ops: 'ops-key-0123456789abcdef0' }) });
    const { status, body } = await readyz(gw);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'degraded', sessions: 0, inflight: 0, generation: expect.stringMatching(/^[0-9a-f]{16}$/), targets: { ready: 1, unreachable: 1 } });
  });

  it('shows the config generation, which a reload that changes something moves and a reload back restores', async () => {
    const config = { ...buildConfig({ targets: { up: { type: 'http', url: listening } } }) };
    const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
    open.push(gw);
    const first = (await readyz(gw)).body.generation;
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    gw.reload({ ...config, shutdownGraceMs: config.shutdownGraceMs + 1 });
    const second = (await readyz(gw)).body.generation;
    expect(second).toMatch(/^[0-9a-f]{16}$/);
    expect(second).not.toBe(first);
    gw.reload(config);
    expect((await readyz(gw)).body.generation).toBe(first);
  });
});
