/**
 * Installing one package for a runner target into the gateway's cache, outside the sandbox and
 * before any client asks (package-cache.ts decides when). npm packages with `npm install
 * --ignore-scripts` (an install script would run here, uncontained, with the network: refused);
 * PyPI packages with `uv tool install`. Each lands in a staging folder first and is renamed into
 * place once complete, so a failed or interrupted install leaves nothing half-installed behind.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/logger.ts';
import { findExecutable } from './executables.ts';
import type { RunnerCall } from './package-spec.ts';
import { treeHash, type LockedPackage } from './package-lock.ts';

/** 10 minutes: a large package on a slow registry; past it the installer is killed and the target refused. */
const INSTALL_TIMEOUT_MS = 600_000;
/** Installer lines kept for the error: npm prints the reason last. */
const TAIL_LINES = 12;

export class InstallError extends Error {}

/** Runs the installer; resolves on exit 0, else rejects with its last output lines (its own words). */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    const tail: string[] = [];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env, shell: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        const text = line.trim();
        if (text === '') continue;
        log.info({ installer: text.slice(0, 500) }, 'package install');
        // npm's padding lines and the path of its debug log say nothing to a client.
        if (/^npm (error|ERR!)( \d+)?$/.test(text) || /complete log of this run/.test(text)) continue;
        tail.push(text.slice(0, 500));
        if (tail.length > TAIL_LINES) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new InstallError(`${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const how = signal === null ? `exited with code ${String(code)}` : `was killed by ${signal}${signal === 'SIGKILL' ? ' (timeout)' : ''}`;
      reject(new InstallError(`${args[0] === 'install' || args[0] === 'tool' ? command : 'installer'} ${how}: ${tail.join(' | ') || 'no output'}`));
    });
  });
}

/** A version as a folder name: what semver and PEP 440 allow, never a path (a hostile manifest could say `../..`). */
const SAFE_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,99}$/;

function folderName(name: string, version: string): string {
  if (!SAFE_VERSION.test(version) || version.includes('..')) throw new InstallError(`${name} says its version is ${JSON.stringify(version.slice(0, 100))}: refused`);
  return `${name.replace('/', '+')}@${version}`;
}

function stagingIn(cacheDir: string, ecosystem: string): string {
  const dir = join(cacheDir, ecosystem, `.staging-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Moves a finished staging folder into place. An existing folder of the same version (an update,
 * or a repair after `verify` failed) is swapped out first and removed after, so the folder is
 * missing only between two renames, never half-written, while a running child reads it.
 */
function settle(staging: string, cacheDir: string, ecosystem: string, folder: string): string {
  const relative = `${ecosystem}/${folder}`;
  const final = join(cacheDir, relative);
  const old = `${final}.old-${randomBytes(6).toString('hex')}`;
  const replacing = existsSync(final);
  if (replacing) renameSync(final, old);
  renameSync(staging, final);
  if (replacing) rmSync(old, { recursive: true, force: true });
  return relative;
}

function binsOf(manifest: { name?: unknown; bin?: unknown }, name: string): Record<string, string> {
  const prefix = `node_modules/${name}/`;
  if (typeof manifest.bin === 'string') return { [name.slice(name.lastIndexOf('/') + 1)]: prefix + manifest.bin };
  const bins: Record<string, string> = {};
  if (typeof manifest.bin === 'object' && manifest.bin !== null) {
    for (const [bin, path] of Object.entries(manifest.bin)) if (typeof path === 'string' && !path.split('/').includes('..')) bins[bin] = prefix + path.replace(/^\.\//, '');
  }
  return bins;
}

/** `npm install name@range` into a folder of the cache; the exact version and integrity from npm's own lock. */
export async function installNpm(call: RunnerCall, cacheDir: string, env: NodeJS.ProcessEnv, log: Logger): Promise<LockedPackage> {
  const npm = findExecutable('npm', env.PATH);
  if (npm === undefined) throw new InstallError(`${call.runner} targets need npm on the gateway's PATH to install ${call.name} (Debian: apt-get install npm)`);
  const staging = stagingIn(cacheDir, 'npm');
  try {
    writeFileSync(join(staging, 'package.json'), '{"name":"switchboard-package","private":true}\n');
    const args = ['install', '--prefix', staging, '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--save-exact', '--loglevel=warn', `${call.name}@${call.range}`];
    await run(npm, args, env, log);
    const lock = JSON.parse(readFileSync(join(staging, 'package-lock.json'), 'utf8')) as { packages?: Record<string, { version?: string; integrity?: string }> };
    const entry = lock.packages?.[`node_modules/${call.name}`];
    const manifest = JSON.parse(readFileSync(join(staging, 'node_modules', call.name, 'package.json'), 'utf8')) as { version?: unknown; bin?: unknown };
    const version = typeof manifest.version === 'string' ? manifest.version : (entry?.version ?? 'unknown');
    const bins = binsOf(manifest, call.name);
    if (Object.keys(bins).length === 0) throw new InstallError(`${call.name}@${version} has no program (no "bin" in its package.json)`);
    const dir = settle(staging, cacheDir, 'npm', folderName(call.name, version));
    const hash = treeHash(join(cacheDir, dir));
    return { ecosystem: 'npm', name: call.name, version, integrity: entry?.integrity ?? '', dir, bins, treeHash: hash, installedAt: new Date().toISOString() };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** `uv tool install` into a folder of the cache, with uv's tool and program folders there too. */
export async function installPypi(call: RunnerCall, cacheDir: string, env: NodeJS.ProcessEnv, log: Logger): Promise<LockedPackage> {
  const uv = findExecutable('uv', env.PATH);
  if (uv === undefined) {
    throw new InstallError(`${call.runner} targets need uv on the gateway's PATH to install ${call.name}: install uv (https://docs.astral.sh/uv/, or pip install uv); Debian has no package of it`);
  }
  // uv's venvs name their own folder in their scripts' first lines: the tree stays where it was built.
  const dir = `pypi/${folderName(call.name, `install-${randomBytes(6).toString('hex')}`)}`;
  const home = join(cacheDir, dir);
  mkdirSync(home, { recursive: true });
  let done = false;
  try {
    const spec = call.range === 'latest' ? call.name : /^[0-9]/.test(call.range) ? `${call.name}==${call.range}` : `${call.name}${call.range}`;
    // Python itself stays the system's: a downloaded interpreter would live outside the cache.
    const uvEnv = { ...env, UV_TOOL_DIR: join(home, 'tools'), UV_TOOL_BIN_DIR: join(home, 'bin'), UV_PYTHON_PREFERENCE: 'only-system', UV_NO_PROGRESS: '1' };
    await run(uv, ['tool', 'install', '--quiet', spec], uvEnv, log);
    const tool = readdirSync(join(home, 'tools')).find((name) => !name.startsWith('.'));
    const lib = tool === undefined ? undefined : join(home, 'tools', tool, 'lib');
    const sitePackages = lib === undefined ? [] : readdirSync(lib).flatMap((py) => readdirSync(join(lib, py, 'site-packages')));
    const normal = call.name.toLowerCase().replace(/[-.]+/g, '_');
    const info = sitePackages.find((name) => name.toLowerCase().startsWith(`${normal}-`) && name.endsWith('.dist-info'));
    const version = info === undefined ? 'unknown' : info.slice(normal.length + 1, -'.dist-info'.length);
    const bins: Record<string, string> = {};
    for (const bin of readdirSync(join(home, 'bin'))) bins[bin] = `bin/${bin}`;
    if (Object.keys(bins).length === 0) throw new InstallError(`${call.name}==${version} has no program (no console script)`);
    done = true;
    return { ecosystem: 'pypi', name: call.name, version, integrity: '', dir, bins, treeHash: treeHash(home), installedAt: new Date().toISOString() };
  } finally {
    if (!done) rmSync(home, { recursive: true, force: true });
  }
}
