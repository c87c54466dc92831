#!/usr/bin/env node
/**
 * The `switchboard` command: parse argv, build the config, start the gateway, stop on a signal.
 * Thin on purpose: parsing lives in config/cli-args.ts, composition in main.ts.
 *
 * Exit codes: 0 clean stop (or --help / --version), 1 runtime failure (port in use, crash while
 * stopping), 2 bad command line or config. A second SIGINT/SIGTERM exits at once with 128 + signal.
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { ConfigSource } from './config/cli-args.ts';
import type { ConfigOverrides } from './config/normalise.ts';
import type { GatewayConfig } from './config/types.ts';
import { enableCompileCache } from './log/compile-cache.ts';
import type { Logger } from './log/logger.ts';
import type { RunningGateway } from './main.ts';

// Before the gateway's modules load (they are imported below, not statically): their compiled
// code is then cached for the next start (log/compile-cache.ts; issue 34, start-up).
enableCompileCache();
const { parseCliArgs, USAGE } = await import('./config/cli-args.ts');
const { isConfigError } = await import('./config/config-error.ts');
const { endpointUrls } = await import('./config/endpoints.ts');
const { resolveConfig } = await import('./config/resolve.ts');
const { watchConfigFile } = await import('./config/watch.ts');
const { installCrashGuard } = await import('./log/crash-guard.ts');
const { createLogger } = await import('./log/logger.ts');
const { createPrettyDestination } = await import('./log/pretty.ts');
const { startGateway } = await import('./main.ts');
const { preparePackages } = await import('./transport/package-cache.ts');

const registryIo = {
  out: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text),
  env: process.env,
};

const EXIT_OK = 0;
const EXIT_RUNTIME = 1;
const EXIT_USAGE = 2;

async function main(argv: readonly string[]): Promise<void> {
  // EPIPE (`switchboard --help | head -1`, or a log reader that went away) must not crash us.
  process.stdout.on('error', ignore);
  let config: GatewayConfig;
  let source: ConfigSource;
  let overrides: ConfigOverrides;
  try {
    const command = parseCliArgs(argv);
    if (command.kind === 'help') return void process.stdout.write(`${USAGE}\n`);
    if (command.kind === 'version') return void process.stdout.write(`${readVersion()}\n`);
    // Rarely run: loaded only when asked for.
    if (command.kind === 'registry') return void (process.exitCode = await (await import('./registry/command.ts')).runRegistryCommand(command.argv, registryIo));
    if (command.kind === 'pins') return void (process.exitCode = await (await import('./governance/command.ts')).runPinsCommand(command.argv, registryIo));
    if (command.kind === 'servers') return void (process.exitCode = await (await import('./transport/servers-command.ts')).runServersCommand(command.argv, registryIo));
    if (command.kind === 'audit') return void (process.exitCode = await (await import('./observe/audit/command.ts')).runAuditCommand(command.argv, registryIo));
    ({ source, overrides } = command);
    config = await resolveConfig(source, overrides);
    if (command.kind === 'validate') return void process.stdout.write(describeConfig(config));
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return fail(EXIT_USAGE, error.message);
  }

  // createLogger writes to process.stdout synchronously (see log/logger.ts for why).
  // A person at a terminal reads lines; anything else (pipes, files, collectors) gets JSON.
  const tty = process.stdout.isTTY === true;
  const logger = createLogger({ level: config.logging.level, ...(tty ? { destination: createPrettyDestination(process.stdout, true) } : {}) });
  installCrashGuard({ logger });
  for (const warning of config.warnings ?? []) logger.warn({ config: source.kind === 'file' ? source.path : source.kind }, warning);
  let gateway: RunningGateway;
  try {
    const file = source.kind === 'file' ? source.path : undefined;
    const loadConfig = file === undefined ? undefined : () => resolveConfig({ kind: 'file', path: file }, overrides);
    gateway = await startGateway(config, { logger, loadConfig });
  } catch (error) {
    return exit(EXIT_RUNTIME, `cannot start the gateway: ${messageOf(error)}`);
  }
  const endpoints = endpointUrls(config, gateway.url);
  logger.info({ endpoints }, `MCP endpoints: ${endpoints.join(' ')}`);
  logger.info(`next: point an MCP client at ${endpoints[0] ?? gateway.url}, e.g. npx @modelcontextprotocol/inspector (transport "Streamable HTTP")`);
  const stopWatching = source.kind === 'file' ? reloadOnChange(source.path, overrides, gateway, logger) : ignore;
  stopOnSignals(gateway, logger, stopWatching);
}

/**
 * Config reload: on SIGHUP and when the file changes, load it again; a valid config is applied
 * (see RunningGateway.reload), an invalid one is logged and the running config stays. Reloads run
 * one at a time; a change during a reload triggers one more afterwards.
 */
function reloadOnChange(path: string, overrides: ConfigOverrides, gateway: RunningGateway, logger: Logger): () => void {
  let running = false;
  let again = false;
  const reload = async (why: string): Promise<void> => {
    if (running) return void (again = true);
    running = true;
    try {
      do {
        again = false;
        try {
          // A new runner target's package is installed before the reload applies (never on a client's time).
          gateway.reload(await preparePackages(await resolveConfig({ kind: 'file', path }, overrides), { logger }));
        } catch (error) {
          if (!isConfigError(error)) throw error;
          logger.error({ why, problems: error.message }, 'config reload failed; keeping the running config');
        }
      } while (again);
    } finally {
      running = false;
    }
  };
  const onSighup = () => void reload('SIGHUP');
  process.on('SIGHUP', onSighup);
  const watcher = watchConfigFile(
    path,
    () => void reload('file changed'),
    (error) => logger.warn({ err: error }, 'cannot watch the config file; reload with SIGHUP'),
  );
  return () => {
    watcher.close();
    process.off('SIGHUP', onSighup);
  };
}

function stopOnSignals(gateway: RunningGateway, logger: Logger, beforeStop: () => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // The operator insists: no more grace.
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    stopping = true;
    beforeStop();
    logger.info({ signal }, 'stopping (send the signal again to exit at once)');
    gateway.close().then(
      () => exit(EXIT_OK),
      (error: unknown) => exit(EXIT_RUNTIME, `error while stopping: ${messageOf(error)}`),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  stopWithParent(() => onSignal('SIGTERM'), logger);
}

/**
 * Started by npm (`npm start`, `npx switchboard`), the gateway sits under npm and a shell; a
 * supervisor, CI's `kill $!` or pm2 signals only npm, which does not always pass the signal on, and
 * the gateway was left running, orphaned, holding its port and children. So under npm it also
 * watches its parent: once reparented (the parent died), it stops as on SIGTERM. Not otherwise:
 * `nohup switchboard &` is meant to outlive its shell.
 */
function stopWithParent(stop: () => void, logger: Logger): void {
  if (process.env.npm_lifecycle_event === undefined && process.env.npm_command === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    logger.info({ parent }, 'the process that started the gateway is gone; stopping');
    stop();
  }, 500);
  timer.unref();
}

/** Nothing is running yet: print and let the process end on its own. */
function fail(code: number, message: string): void {
  process.stderr.write(`switchboard: ${message}\n`);
  process.exitCode = code;
}

/** Something may still hold the event loop open (a child that would not die): exit explicitly. */
function exit(code: number, message?: string): never {
  if (message !== undefined) process.stderr.write(`switchboard: ${message}\n`);
  process.exit(code);
}

function ignore(): void {}

/** What `switchboard validate` prints for a config that loads: what it would serve, and where. */
function describeConfig(config: GatewayConfig): string {
  const lines = [`config OK: ${config.targets.size} server(s), listening on ${config.listen.host}:${config.listen.port}`];
  for (const warning of config.warnings ?? []) lines.push(`  warning: ${warning}`);
  for (const [name, target] of config.targets) {
    lines.push(`  ${name}: ${target.type === 'stdio' ? `stdio, ${target.command}` : `${target.type}, ${new URL(target.url).origin}`}`);
  }
  for (const url of endpointUrls(config, `http://${config.listen.host}:${config.listen.port}`)) lines.push(`  serves ${url}`);
  return `${lines.join('\n')}\n`;
}

function readVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const version = typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined;
  return typeof version === 'string' ? version : 'unknown';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`switchboard: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(EXIT_RUNTIME);
});
