/**
 * Install once, run contained (issue 31): an `npx` server with the network off, its package
 * installed from the npm registry into the gateway's cache at start (never on a client's time),
 * then run from there inside bubblewrap; pinned by the lock file until `servers install --update`;
 * a package that cannot be installed refuses its target with npm's own words; `uvx` without `uv`
 * names what to install; warm spares of such a server. Real npm, real bwrap, the SDK client.
 * The cache lives under /tmp in a folder with a space (the sandbox's private /tmp hides it unless
 * the package folder is bound). One install per run of this file.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxConfig, StdioTargetConfig } from '../../src/config/types.ts';
import { preparePackages } from '../../src/transport/package-cache.ts';
import { LOCK_FILE } from '../../src/transport/package-lock.ts';
import { errorOf, textOf } from '../support/aggregate.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGateway, type TestTarget } from '../support/gateway.ts';
import { endpointsOf, initializeAt, run, start, useCliProcesses } from '../support/cli.ts';

useCliProcesses();
const PACKAGE = '@modelcontextprotocol/server-everything';
let root: string;
let cacheDir: string;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'sb packages '));
  cacheDir = join(root, 'cache');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close().catch(() => undefined);
});

const offline: SandboxConfig = { writable: [], readable: undefined, network: false };
const everything = (extra: Partial<TestTarget> = {}): TestTarget => ({ command: 'npx', args: ['-y', PACKAGE, 'stdio'], sandbox: offline, ...extra });

async function gateway(targets: Record<string, TestTarget>, lines: string[]): Promise<TestGateway> {
  const g = await startTestGateway({ targets, logLines: lines, packages: { cacheDir, install: true } });
  open.push(g);
  return g;
}

/** Opens a session (initialize and initialized) and returns the client and how long it took. */
async function session(g: TestGateway, target: string): Promise<{ client: Client; ms: number }> {
  const client = new Client({ name: 'package-test', version: '1.0.0' });
  const started = performance.now();
  await client.connect(new StreamableHTTPClientTransport(g.mcpUrl(target)));
  const ms = performance.now() - started;
  open.push(client);
  return { client, ms };
}

const messages = (lines: string[]) => lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('npx servers run from the cache, contained', () => {
  it('with the network off: installed once at start with progress in the log, then sessions open from the cache; tools/list and echo work', { timeout: 240_000 }, async () => {
    const lines: string[] = [];
    const started = performance.now();
    const g = await gateway({ everything: everything() }, lines);
    const installMs = performance.now() - started;
    expect(messages(lines)).toContain(`installing ${PACKAGE}@latest for npx (once; later starts use the cache)`);
    expect(messages(lines).some((msg) => msg.startsWith(`installed ${PACKAGE}@`))).toBe(true);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { client, ms } = await session(g, 'everything');
      times.push(ms);
      if (i === 0) {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
        expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'contained' } }))).toContain('contained');
      }
    }
    console.log(`package-cache: first start with install ${Math.round(installMs)} ms; sessions p50 ${Math.round(p50(times))} ms (${times.map(Math.round).join(', ')})`);
    const lock = JSON.parse(readFileSync(join(cacheDir, LOCK_FILE), 'utf8')) as { packages: Record<string, { version: string; integrity: string }> };
    expect(lock.packages[`npm:${PACKAGE}@latest`]).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), integrity: expect.stringMatching(/^sha512-/) });
  });

  it('a second start uses the cache: nothing is installed, the lock is unchanged, and latest stays pinned', { timeout: 120_000 }, async () => {
    const before = readFileSync(join(cacheDir, LOCK_FILE), 'utf8');
    const lines: string[] = [];
    const g = await gateway({ everything: everything() }, lines);
    expect(messages(lines).filter((msg) => msg.startsWith('installing'))).toEqual([]);
    const { client } = await session(g, 'everything');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'again' } }))).toContain('again');
    expect(readFileSync(join(cacheDir, LOCK_FILE), 'utf8')).toBe(before);
  });

  it('warm spares of the sandboxed, cached server: a session takes one', { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    const g = await gateway({ everything: everything({ upstream: { mode: 'per-session', children: 1, spares: 1 } }) }, lines);
    await expect.poll(() => messages(lines).includes('spare ready'), { timeout: 60_000 }).toBe(true);
    const { client, ms } = await session(g, 'everything');
    expect(messages(lines)).toContain('took a warm spare');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'warm' } }))).toContain('warm');
    console.log(`package-cache: a session on a warm spare opened in ${Math.round(ms)} ms`);
  });

  it('a package that cannot be installed refuses its target with npm\'s own error (not a timeout); the others serve', { timeout: 120_000 }, async () => {
    const lines: string[] = [];
    const g = await gateway({ everything: everything(), nope: everything({ args: ['-y', '@switchboard-test-none/no-such-package-404'] }) }, lines);
    const error = await errorOf(session(g, 'nope'));
    expect(error.data).toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED' });
    expect(error.message).toMatch(/E404|404 Not Found/);
    expect(lines.some((line) => line.includes('"level":50') && line.includes('cannot install @switchboard-test-none/no-such-package-404'))).toBe(true);
    const { client } = await session(g, 'everything');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('uvx without uv on the PATH: the target is refused with a start-up error that names uv', async () => {
    const lines: string[] = [];
    const config = buildConfig({ targets: { time: { command: 'uvx', args: ['mcp-server-time'], sandbox: offline } }, packages: { cacheDir, install: true } });
    const prepared = await preparePackages(config, { logger: createTestLogger('info', lines), env: { PATH: dirname(process.execPath) } });
    const target = prepared.targets.get('time') as StdioTargetConfig;
    expect(target.package?.error).toMatch(/need uv on the gateway's PATH.*install uv/);
    expect(lines.some((line) => line.includes('"level":50') && line.includes('install uv'))).toBe(true);
  });
});

describe('the command', () => {
  it('a reload that adds an npx server installs its package before it applies; the new server then serves', { timeout: 240_000 }, async () => {
    const lock = JSON.parse(readFileSync(join(cacheDir, LOCK_FILE), 'utf8')) as { packages: Record<string, { version: string }> };
    const version = (lock.packages[`npm:${PACKAGE}@latest`] as { version: string }).version;
    const config = join(root, 'reload.yaml');
    const document = (extra: string) => `mcpServers:\n  everything:\n    command: npx\n    args: [-y, "${PACKAGE}", stdio]\n    sandbox: { network: false }\n${extra}gateway:\n  port: 0\n  packages: { cacheDir: "${cacheDir}" }\n`;
    writeFileSync(config, document(''));
    const running = start(['--config', config]);
    const [url] = await endpointsOf(running);
    // The exact version is another lock entry than `latest`: installed at the reload, not taken from the cache.
    writeFileSync(config, document(`  pinned:\n    command: npx\n    args: [-y, "${PACKAGE}@${version}", stdio]\n    sandbox: { network: false }\n`));
    await expect.poll(() => running.stdout().includes('"msg":"config reloaded"'), { timeout: 180_000, interval: 200 }).toBe(true);
    const out = running.stdout();
    expect(out.indexOf(`installed ${PACKAGE}@${version}`)).toBeGreaterThan(-1);
    expect(out.indexOf(`installed ${PACKAGE}@${version}`)).toBeLessThan(out.indexOf('"msg":"config reloaded"'));
    await initializeAt(new URL('/servers/pinned/mcp', url).href);
    running.child.kill('SIGTERM');
    await running.exited;
  });
});

describe('switchboard servers', () => {
  it('list shows the pinned version and integrity; verify finds a changed file; install --update installs again', { timeout: 240_000 }, async () => {
    const config = join(root, 'switchboard.yaml');
    writeFileSync(config, `mcpServers:\n  everything:\n    command: npx\n    args: [-y, "${PACKAGE}", stdio]\n    sandbox: { network: false }\ngateway:\n  packages: { cacheDir: "${cacheDir}" }\n`);
    const list = await run(['servers', 'list', '--config', config]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`everything: npx ${PACKAGE}@latest -> \\d+\\.\\d+\\.\\d+\\S* sha512-`));
    expect((await run(['servers', 'verify', '--config', config])).stdout).toContain('everything: ok');
    const lock = JSON.parse(readFileSync(join(cacheDir, LOCK_FILE), 'utf8')) as { packages: Record<string, { dir: string; bins: Record<string, string> }> };
    const entry = lock.packages[`npm:${PACKAGE}@latest`] as { dir: string; bins: Record<string, string> };
    appendFileSync(join(cacheDir, entry.dir, Object.values(entry.bins)[0] as string), '\n// tampered\n');
    const tampered = await run(['servers', 'verify', '--config', config]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('everything: changed');
    const update = await run(['servers', 'install', '--update', '--config', config]);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toMatch(new RegExp(`everything: ${PACKAGE}@latest -> \\d`));
    expect((await run(['servers', 'verify', '--config', config])).stdout).toContain('everything: ok');
  });
});
