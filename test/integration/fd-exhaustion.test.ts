/**
 * Out of file descriptors (EMFILE), Node spawns a child without any stdio. The gateway must answer
 * the session that needed the child with GW_UPSTREAM_SPAWN_FAILED and keep serving: before, the
 * spawn error handler touched the missing pipes and the uncaught TypeError ended the process.
 * Driven against the real command under `ulimit -n`, with real sockets filling the table.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killTree } from '../support/processes.ts';
import { openSocket } from '../support/raw-http.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'src', 'cli.ts');
const fixture = join(root, 'test', 'fixtures', 'misbehaving-server.mjs');
const LIMIT = 64;
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const undo of cleanup.splice(0)) undo();
});

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fd', version: '1' } },
});

let childState = () => 'state unknown';

/** Writes one POST on an open keep-alive socket and resolves with the status and body. */
function postOn(socket: Socket, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, split))?.[1] ?? -1);
      if (split !== -1 && length >= 0 && Buffer.byteLength(text.slice(split + 4)) >= length) {
        socket.off('data', onData);
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(split + 4) });
      }
    };
    socket.on('data', onData);
    socket.once('close', () => resolve({ status: 0, body: `connection closed; the gateway ${childState()}` }));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${socket.remotePort}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('file descriptors run out', () => {
  it('a new session gets GW_UPSTREAM_SPAWN_FAILED (EMFILE), the gateway keeps serving, and serves again once descriptors are free', async () => {
    const child = spawn('/bin/sh', ['-c', `ulimit -n ${LIMIT} && exec "$@"`, 'sh', process.execPath, cli, '--port', '0', '--', process.execPath, fixture, 'normal'], {
      cwd: root,
    });
    cleanup.push(() => void killTree(child.pid)); // the gateway (the shell exec'd it) and its children
    childState = () => (child.exitCode === null ? 'is running' : `exited with ${child.exitCode}`);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const url = new URL(
      await waitFor(() => /"endpoints":\["([^"]+)"/.exec(out)?.[1], 60_000),
    );
    const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;

    const first = await openSocket(url);
    const fillers: Socket[] = [];
    cleanup.push(() => fillers.forEach((s) => s.destroy()));
    // Fill the table to one short of the limit: a spawn needs several descriptors at once.
    while (fds() < LIMIT - 1 && fillers.length < LIMIT) {
      const before = fds();
      fillers.push(await openSocket(url));
      await waitFor(() => (fds() > before ? true : undefined), 2_000).catch(() => undefined);
    }

    const refused = await postOn(first, url.pathname, INIT);
    expect(refused.status, refused.body).toBe(200);
    expect(JSON.parse(refused.body)).toMatchObject({
      id: 'init',
      error: { code: -32603, data: { code: 'GW_UPSTREAM_SPAWN_FAILED', target: 'node', reason: expect.stringMatching(/^E[MN]FILE$/) } },
    });
    expect(child.exitCode).toBeNull();

    for (const socket of fillers.splice(0)) socket.destroy();
    await waitFor(() => (fds() < LIMIT - 10 ? true : undefined), 5_000);
    const served = await postOn(first, url.pathname, INIT);
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ id: 'init', result: { serverInfo: expect.any(Object) } });
    expect(child.exitCode).toBeNull();
    first.destroy();
  });
});
