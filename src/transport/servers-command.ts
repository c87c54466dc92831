/**
 * `switchboard servers install|list|verify`: the operator's side of the package cache
 * (package-cache.ts, docs/upstreams.md "Packages run by npx or uvx"). `install` does what a
 * gateway start does, ahead of it (a container image's build step); `--update` resolves ranges
 * and `latest` again. Exit codes: 0 done, 1 a package failed or differs, 2 a usage or config problem.
 */
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../config/load.ts';
import type { GatewayConfig } from '../config/types.ts';
import { createLogger } from '../log/logger.ts';
import { createPrettyDestination } from '../log/pretty.ts';
import { cacheDirOf, packageStatuses, preparePackages, runnerTargets, verifyPackage } from './package-cache.ts';

export const SERVERS_USAGE = `Usage:
  switchboard servers install [<server>...] [--update] [--config <file>]
  switchboard servers list    [--config <file>]
  switchboard servers verify  [--config <file>]

  install  install the packages of npx, bunx, uvx and pipx-run servers into the cache
           (gateway.packages.cacheDir), pinned to the exact version in its lock file;
           --update resolves version ranges and "latest" again
  list     each such server's package: the range asked for, the version pinned, its integrity
  verify   whether each installed package's files are still those installed

  --config <file>   the gateway's config (default switchboard.yaml)`;

export interface ServersIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

const OPTIONS = { config: { type: 'string', short: 'c' }, update: { type: 'boolean' } } as const;

/** Runs the command and returns its exit code. */
export async function runServersCommand(argv: readonly string[], io: ServersIo): Promise<number> {
  try {
    const [verb, ...rest] = argv;
    if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
      io.out(`${SERVERS_USAGE}\n`);
      return verb === undefined ? 2 : 0;
    }
    if (verb !== 'install' && verb !== 'list' && verb !== 'verify') throw new UsageError(`unknown servers command "${verb}" (install, list or verify)`);
    const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
    if (verb !== 'install' && (positionals.length > 0 || values.update === true)) throw new UsageError(`${verb} takes only --config`);
    const config = await loadConfigFile(values.config ?? 'switchboard.yaml', { env: io.env });
    for (const name of positionals) {
      if (!runnerTargets(config).some(({ target }) => target.name === name)) throw new UsageError(`"${name}" is no server run by npx, bunx, uvx or pipx run in this config`);
    }
    if (verb === 'install') return await install(config, positionals, values.update === true, io);
    return verb === 'list' ? list(config, io) : verify(config, io);
  } catch (error) {
    io.err(`switchboard servers: ${(error as Error).message}\n`);
    return 2;
  }
}

async function install(config: GatewayConfig, only: readonly string[], update: boolean, io: ServersIo): Promise<number> {
  const logger = createLogger({ level: 'info', destination: createPrettyDestination(process.stderr, false) });
  const prepared = await preparePackages(config, { logger, update, only: only.length === 0 ? undefined : only, env: io.env });
  let failed = 0;
  for (const target of prepared.targets.values()) {
    if (target.type !== 'stdio' || target.package === undefined || (only.length > 0 && !only.includes(target.name))) continue;
    if (target.package.error !== undefined) failed++;
    io.out(`${target.name}: ${target.package.spec} ${target.package.error === undefined ? `-> ${target.package.version ?? '?'}` : `FAILED: ${target.package.error}`}\n`);
  }
  io.out(`cache: ${cacheDirOf(config)}\n`);
  return failed === 0 ? 0 : 1;
}

function list(config: GatewayConfig, io: ServersIo): number {
  io.out(`cache: ${cacheDirOf(config)}\n`);
  for (const { target, call, locked } of packageStatuses(config)) {
    const what = `${call.runner} ${call.name}@${call.range}`;
    io.out(locked === undefined ? `${target}: ${what} not installed\n` : `${target}: ${what} -> ${locked.version} ${locked.integrity || '(no registry integrity)'} ${locked.dir} (installed ${locked.installedAt})\n`);
  }
  return 0;
}

function verify(config: GatewayConfig, io: ServersIo): number {
  let bad = 0;
  for (const { target, locked } of packageStatuses(config)) {
    const verdict = locked === undefined ? 'not installed' : verifyPackage(config, locked);
    if (verdict !== 'ok') bad++;
    io.out(`${target}: ${verdict}\n`);
  }
  return bad === 0 ? 0 : 1;
}
