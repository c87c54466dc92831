/**
 * Install once, run contained (docs/upstreams.md, "Packages run by npx or uvx"). A stdio target
 * whose command is a package runner (`npx`, `bunx`, `uvx`, `pipx run`) has its package installed
 * into the gateway's cache folder at start or reload, never on a client's time, pinned to the exact
 * version in the lock file (package-lock.ts); the target then runs the package's own entry point
 * from there, so a sandbox needs neither the network nor a writable cache to start it.
 *
 * A target whose package cannot be installed keeps running nothing: it carries the installer's
 * own error (`package.error`), and containment refuses to spawn it with exactly that error.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_INHERITED_ENV } from '../config/default-env.ts';
import type { GatewayConfig, PackageRun, StdioTargetConfig, TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { findExecutable } from './executables.ts';
import { installNpm, installPypi } from './package-install.ts';
import { readLock, treeHash, writeLock, type Lock, type LockedPackage } from './package-lock.ts';
import { lockKey, parseRunnerCall, type RunnerCall } from './package-spec.ts';

/** Where packages go when a config built in code says nothing (the file's default is beside it). */
export const DEFAULT_CACHE_DIR = '.switchboard/packages';

export interface PackageOptions {
  logger: Logger;
  /** Resolve ranges and `latest` again and install what they name now (`servers install --update`). */
  update?: boolean | undefined;
  /** Only these targets (the CLI's names); default: every runner target. */
  only?: readonly string[] | undefined;
  /** The installer's environment; default: the gateway's. */
  env?: NodeJS.ProcessEnv | undefined;
}

/** A runner target's package and where it stands. */
export interface PackageStatus {
  readonly target: string;
  readonly call: RunnerCall;
  readonly locked: LockedPackage | undefined;
}

export function cacheDirOf(config: GatewayConfig): string {
  return config.packages?.cacheDir ?? join(process.cwd(), DEFAULT_CACHE_DIR);
}

/** The runner targets of `config` with what each asks for (none when `packages.install` is false or, in a config built in code, unset). */
export function runnerTargets(config: GatewayConfig, only?: readonly string[]): Array<{ target: StdioTargetConfig; call: RunnerCall }> {
  if (config.packages?.install !== true) return [];
  const out: Array<{ target: StdioTargetConfig; call: RunnerCall }> = [];
  for (const target of config.targets.values()) {
    if (target.type !== 'stdio' || target.package !== undefined || (only !== undefined && !only.includes(target.name))) continue;
    const call = parseRunnerCall(target.command, target.args);
    if (call !== undefined) out.push({ target, call });
  }
  return out;
}

/** The program a locked package runs for `call`: the one named, the one named like the package, or its only one. */
function entryOf(locked: LockedPackage, call: RunnerCall): string | undefined {
  const bins = Object.keys(locked.bins);
  const unscoped = call.name.slice(call.name.lastIndexOf('/') + 1);
  const pick = call.bin ?? (bins.includes(unscoped) ? unscoped : bins.length === 1 ? bins[0] : bins.find((bin) => unscoped.endsWith(bin) || bin.endsWith(unscoped)));
  return pick === undefined ? undefined : locked.bins[pick];
}

/** The target rewritten to run `locked` from the cache, or refused with the reason. */
function runFromCache(target: StdioTargetConfig, call: RunnerCall, cacheDir: string, locked: LockedPackage | undefined, error?: string): StdioTargetConfig {
  const spec = `${call.name}@${call.range}`;
  const refused = (why: string): StdioTargetConfig => Object.freeze({ ...target, package: Object.freeze({ runner: call.runner, spec, error: why }) });
  if (locked === undefined) return refused(error ?? `${spec} is not installed: restart or reload the gateway, or run switchboard servers install ${target.name}`);
  const dir = join(cacheDir, locked.dir);
  const entry = entryOf(locked, call);
  if (entry === undefined) return refused(`${locked.name}@${locked.version} has no program ${call.bin ?? ''} (it has ${Object.keys(locked.bins).join(', ')})`);
  const file = join(dir, entry);
  // Clients read this reason: the entry relative to the cache, not the cache's own path.
  if (!existsSync(file)) return refused(`${locked.dir}/${entry} is missing from the package cache: run switchboard servers install ${target.name}`);
  const pkg: PackageRun = Object.freeze({ runner: call.runner, spec, version: locked.version, dir });
  if (locked.ecosystem === 'pypi') return Object.freeze({ ...target, command: file, args: Object.freeze([...call.args]), package: pkg });
  // npm programs run on Node (npx's `#!/usr/bin/env node`): this gateway's own, a known version and path.
  const runtime = call.runner === 'bunx' ? findExecutable('bun', process.env.PATH) : process.execPath;
  if (runtime === undefined) return refused('bunx targets need bun on the gateway\'s PATH (https://bun.sh)');
  return Object.freeze({ ...target, command: runtime, args: Object.freeze([file, ...call.args]), package: pkg });
}

function withTargets(config: GatewayConfig, replaced: ReadonlyMap<string, TargetConfig>): GatewayConfig {
  if (replaced.size === 0) return config;
  const targets = new Map(config.targets);
  for (const [name, target] of replaced) targets.set(name, target);
  return Object.freeze({ ...config, targets });
}

/** Rewrites runner targets from the lock file alone (no install): a package not in it is refused, saying how to install it. */
export function applyLockedPackages(config: GatewayConfig, errors: ReadonlyMap<string, string> = new Map(), lock?: Lock): GatewayConfig {
  const runners = runnerTargets(config);
  if (runners.length === 0) return config;
  const cacheDir = cacheDirOf(config);
  let current: Lock | undefined = lock;
  let lockError: string | undefined;
  try {
    current ??= readLock(cacheDir);
  } catch (error) {
    lockError = `the package lock file cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  const replaced = new Map<string, TargetConfig>();
  for (const { target, call } of runners) {
    const locked = errors.has(target.name) ? undefined : current?.packages[lockKey(call)];
    replaced.set(target.name, runFromCache(target, call, cacheDir, locked, errors.get(target.name) ?? lockError));
  }
  return withTargets(config, replaced);
}

/**
 * Installs what the runner targets need and is not in the lock (everything asked for, with
 * `update`), one at a time, logging progress; then rewrites the targets (applyLockedPackages).
 * Never throws for a package: a failed one refuses its target with the installer's words.
 */
export async function preparePackages(config: GatewayConfig, options: PackageOptions): Promise<GatewayConfig> {
  const runners = runnerTargets(config, options.only);
  if (runners.length === 0) return config;
  const cacheDir = cacheDirOf(config);
  const log = options.logger;
  let lock: Lock;
  try {
    lock = readLock(cacheDir);
  } catch {
    return applyLockedPackages(config);
  }
  const errors = new Map<string, string>();
  const done = new Map<string, LockedPackage | string>();
  for (const { target, call } of runners) {
    const key = lockKey(call);
    const before = lock.packages[key];
    if (before !== undefined && options.update !== true && existsSync(join(cacheDir, before.dir))) continue;
    let outcome = done.get(key);
    if (outcome === undefined) {
      outcome = await installOne(call, cacheDir, installerEnv(options.env ?? process.env), log.child({ target: target.name, package: `${call.name}@${call.range}` }));
      done.set(key, outcome);
      if (typeof outcome !== 'string') {
        lock = { version: 1, packages: { ...readLockOr(cacheDir, lock).packages, [key]: outcome } };
        writeLock(cacheDir, lock);
      }
    }
    if (typeof outcome === 'string') errors.set(target.name, outcome);
  }
  return applyLockedPackages(config, errors, lock);
}

function readLockOr(cacheDir: string, fallback: Lock): Lock {
  try {
    return readLock(cacheDir);
  } catch {
    return fallback;
  }
}

async function installOne(call: RunnerCall, cacheDir: string, env: NodeJS.ProcessEnv, log: Logger): Promise<LockedPackage | string> {
  const started = Date.now();
  log.info({ cacheDir }, `installing ${call.name}@${call.range} for ${call.runner} (once; later starts use the cache)`);
  try {
    const locked = await (call.ecosystem === 'npm' ? installNpm(call, cacheDir, env, log) : installPypi(call, cacheDir, env, log));
    log.info({ version: locked.version, integrity: locked.integrity, ms: Date.now() - started }, `installed ${locked.name}@${locked.version}`);
    return locked;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error({ ms: Date.now() - started }, `cannot install ${call.name}@${call.range}: ${message}`);
    return `cannot install ${call.name}@${call.range}: ${message}`;
  }
}

/**
 * What the installer gets of the gateway's environment: what a child gets by default (PATH, home,
 * locale, proxies, CAs) and the installers' own settings (npm_config_*, UV_*), never the rest (the
 * gateway's keys and tokens): npm reads .npmrc for a private registry's credentials itself.
 */
export function installerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (DEFAULT_INHERITED_ENV.includes(name) || /^(npm_config_|NPM_CONFIG_|UV_|XDG_)/.test(name)) out[name] = value;
  }
  return out;
}

/** Each runner target's package as the lock has it (`servers list`). */
export function packageStatuses(config: GatewayConfig): PackageStatus[] {
  const lock = readLock(cacheDirOf(config));
  return runnerTargets(config).map(({ target, call }) => ({ target: target.name, call, locked: lock.packages[lockKey(call)] }));
}

/** Whether each installed package's files are still those installed (`servers verify`): 'ok', or what differs. */
export function verifyPackage(config: GatewayConfig, locked: LockedPackage): string {
  const dir = join(cacheDirOf(config), locked.dir);
  if (!existsSync(dir)) return `missing: ${dir}`;
  const now = treeHash(dir);
  return now === locked.treeHash ? 'ok' : `changed: ${dir} hashes to ${now}, the lock says ${locked.treeHash}`;
}
