/**
 * Approving a pending change takes the whole hash (issue 30, item 5): a short prefix is what a
 * server can grind a malicious version to match. Two versions of `echo` wait (a benign edit and
 * then a link); the refusal, `pins diff` and `GET /admin/pins` print the whole hash; a prefix is
 * refused by the admin API (400) and the `pins` command (exit 2), whatever version it starts;
 * the whole hash approves exactly the version reviewed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admin, eventually, modernPath, pendingEcho, RUGPULL, startFromFile, type PinningGateway } from '../support/pinning.ts';

const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, [cli, ...args]).then(
    (out) => ({ code: 0, ...out }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );

let dir: string;
let gw: PinningGateway | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-pins-approve-'));
});
afterEach(async () => {
  await gw?.gateway.close();
  gw = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('approving a pinned change by its whole hash only', () => {
  it('refuses a prefix on the admin API and the pins command; the whole hash approves the version reviewed', async () => {
    const state = join(dir, 'rug.state');
    await writeFile(state, 'original');
    const config = join(dir, 'switchboard.json');
    await writeFile(config, JSON.stringify({ mcpServers: { rug: { command: process.execPath, args: [RUGPULL], env: { RUGPULL_STATE: state } } }, gateway: { port: 0, pinning: { mode: 'block' } } }));
    gw = await startFromFile(config);
    const path = modernPath(gw.gateway, '/servers/rug/mcp', 'echo');
    expect((await path.list()).map((t) => t.name)).toContain('echo');

    await writeFile(state, 'benign');
    const benign = await pendingEcho(gw.gateway, 'rug', (c) => c.dangers.length === 0);
    expect(benign.hash).toMatch(/^[0-9a-f]{64}$/);
    await writeFile(state, 'url');
    const url = await pendingEcho(gw.gateway, 'rug', (c) => c.dangers.length > 0);
    const refused = await eventually('the url version refused', async () => {
      const outcome = await path.call('echo', { text: 'x' });
      return 'error' in outcome && outcome.error.message.includes('attacker.example') ? outcome.error : undefined;
    });
    // The refusal carries the whole hash, as pins diff does.
    expect(refused.data?.hash).toBe(url.hash);
    const diff = await run(['pins', 'diff', 'rug', '--config', config]);
    expect(diff.stdout).toContain(benign.hash);
    expect(diff.stdout).toContain(url.hash);

    for (const prefix of [benign.hash.slice(0, 6), benign.hash.slice(0, 16), benign.hash.slice(0, 63), url.hash.slice(0, 6)]) {
      const api = await admin(gw.gateway, '/admin/pins/approve', { target: 'rug', name: 'echo', hash: prefix });
      expect(api.status, prefix).toBe(400);
      expect(api.json.error).toContain('64 hex digits');
      const command = await run(['pins', 'approve', 'rug', '--name', 'echo', '--hash', prefix, '--config', config]);
      expect(command.code, prefix).toBe(2);
      expect(command.stderr).toContain('not a prefix');
    }
    expect((await admin(gw.gateway, '/admin/pins')).json.pending).toHaveLength(2);

    // The whole hash (any case) approves that version and no other.
    const approved = await run(['pins', 'approve', 'rug', '--name', 'echo', '--hash', benign.hash.toUpperCase(), '--config', config]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`approved rug tool "echo" ${benign.hash}`);
    await writeFile(state, 'benign');
    await eventually('the benign version served', async () => {
      const outcome = await path.call('echo', { text: 'ok' });
      return 'text' in outcome ? outcome : undefined;
    });
  }, 120_000);
});
