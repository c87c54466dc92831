/**
 * A child that stops reading its stdin. Before, every request's bytes piled up in the gateway
 * (600 calls of 1 MiB grew RSS by 1.34 GB, never given back). Now at most `maxQueuedBytes` wait;
 * past it requests fail at once with GW_UPSTREAM_BUSY, waiting requests that time out are
 * withdrawn, and the gateway keeps serving. The gateway runs as its own process so its RSS is
 * its own; the figure it logs is the before/after reading.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killTree } from '../support/processes.ts';
import { rpc } from '../support/recorder.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = join(root, 'test', 'fixtures', 'misbehaving-server.mjs');
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0)) await undo();
});

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

describe('a child that stops reading stdin', () => {
  it('300 calls of 1 MiB: memory plateaus, clear errors (GW_UPSTREAM_BUSY), other sessions served', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-stdin-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const config = join(dir, 'config.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          // Long enough that a whole wave arrives before the first queued calls time out and make
          // room, even on a loaded machine: past the queue's bound, the rest must be refused at once.
          // Its timeouts would end the hung child after 5 (circuitBreaker.timeouts); here what waits for it must stay bounded.
          stuck: { command: process.execPath, args: [fixture, 'stop-reading'], timeoutMs: 10_000, circuitBreaker: { timeouts: 0 } },
          fine: { command: process.execPath, args: [fixture, 'normal'] },
        },
        gateway: { port: 0, limits: { maxBodyBytes: 2 * 1024 * 1024 } },
      }),
    );
    const child = spawn(process.execPath, [join(root, 'src', 'cli.ts'), '--config', config], { cwd: root });
    cleanup.push(() => void killTree(child.pid)); // the gateway and its children, one of which reads nothing
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    await expect.poll(() => /"url":"([^"]+)"/.exec(out)?.[1], { timeout: 60_000 }).toBeDefined();
    const base = /"url":"([^"]+)"/.exec(out)?.[1] as string;
    const pid = child.pid as number;

    const stuck = await rpc.initialize(new URL('/servers/stuck/mcp', base));
    const mib = 'x'.repeat(1024 * 1024);
    let next = 0;
    const wave = () =>
      Promise.all(
        Array.from({ length: 100 }, () =>
          stuck.request({ jsonrpc: '2.0', id: next++, method: 'tools/call', params: { name: 'echo', arguments: { text: mib } } }),
        ),
      );
    // Three waves of 100 MiB: if what waits for the child is bounded, memory plateaus after the
    // first; if not, every wave adds its 100 MiB (and more, in copies).
    const rss: number[] = [await rssKiB(pid)];
    const codes: Array<string | undefined> = [];
    for (let i = 0; i < 3; i++) {
      for (const a of await wave()) codes.push((a.json.error as { data?: { code?: string } } | undefined)?.data?.code);
      rss.push(await rssKiB(pid));
    }
    const mb = (kib: number) => Math.round(kib / 1024);
    console.log(`gateway RSS (MiB) before and after each wave of 100 x 1 MiB to a stuck child: ${rss.map(mb).join(', ')}`);
    expect(codes.every((c) => c === 'GW_UPSTREAM_BUSY' || c === 'GW_UPSTREAM_TIMEOUT')).toBe(true);
    expect(codes.filter((c) => c === 'GW_UPSTREAM_BUSY').length).toBeGreaterThan(200);
    // Unbounded, waves 2 and 3 add over 400 MiB (123, 475, 718, 912 MiB); bounded, what grows is
    // the garbage collector's slack for the bodies in flight (124, 244, 277, 308 MiB, then flat
    // near 270 MiB; up to +121 MiB between waves 1 and 3 under a loaded full test run).
    expect(mb((rss[3] as number) - (rss[1] as number))).toBeLessThan(200);

    // Another target, and the same gateway, still answer.
    const fine = await rpc.initialize(new URL('/servers/fine/mcp', base));
    const ok = await fine.request({ jsonrpc: '2.0', id: 'ok', method: 'tools/call', params: { name: 'echo', arguments: { text: 'fine' } } });
    expect(ok.json).toMatchObject({ result: { content: [{ text: 'fine' }] } });
    expect(await stuck.delete()).toBe(200);
  }, 240_000);
});
