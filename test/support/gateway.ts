/**
 * Starts a whole gateway in-process on a free port, with a hand-built config, for integration tests.
 */
import { Writable } from 'node:stream';
import { DEFAULT_INHERITED_ENV } from '../../src/config/default-env.ts';
import type { GatewayConfig, LogLevel, RemoteTargetConfig, StdioTargetConfig, TargetConfig } from '../../src/config/types.ts';
import { createLogger, type Logger } from '../../src/log/logger.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { fileURLToPath } from 'node:url';

export type TestTarget = Partial<StdioTargetConfig> & { command: string };
/** A remote target (Streamable HTTP or legacy SSE) for tests. */
export type RemoteTestTarget = Partial<RemoteTargetConfig> & { type: 'http' | 'sse'; url: string };

export interface TestGatewayOptions {
  targets: Record<string, TestTarget | RemoteTestTarget>;
  /** Overrides for top-level gateway settings (shallow per section). */
  limits?: Partial<GatewayConfig['limits']>;
  session?: Partial<GatewayConfig['session']>;
  websocket?: Partial<GatewayConfig['websocket']>;
  /** Reachability probes behind /readyz (default: the schema's). */
  health?: GatewayConfig['health'];
  allowedOrigins?: string[];
  allowedHosts?: string[];
  shutdownGraceMs?: number;
  /** Collect log lines in memory instead of discarding them. */
  logLines?: string[];
  /** gateway.packages (npx/uvx targets run from a cache); absent: runner commands run as written. */
  packages?: GatewayConfig['packages'];
  /** gateway.telemetry (traces); absent: every key unset. */
  telemetry?: GatewayConfig['telemetry'];
  /** The OTEL_* environment the gateway sees; default none (the machine's own never leaks in). */
  env?: Record<string, string>;
}

export interface TestGateway extends RunningGateway {
  /** URL of a target's Streamable HTTP endpoint. */
  mcpUrl(target?: string): URL;
  logger: Logger;
}

export function stdioTarget(name: string, t: TestTarget): StdioTargetConfig {
  return {
    type: 'stdio',
    name,
    command: t.command,
    args: t.args ?? [],
    env: t.env ?? {},
    principalEnv: t.principalEnv ?? {},
    inheritEnv: t.inheritEnv ?? [...DEFAULT_INHERITED_ENV],
    cwd: t.cwd,
    timeouts: t.timeouts ?? { requestMs: 30_000, resetOnProgress: true, maxTotalMs: 0 },
    restart: t.restart ?? { onExit: 'end', maxRestarts: 3, initialBackoffMs: 100, maxBackoffMs: 2_000 },
    shutdownGraceMs: t.shutdownGraceMs ?? 500,
    maxMessageBytes: t.maxMessageBytes ?? 8 * 1024 * 1024,
    stderrLinesPerSecond: t.stderrLinesPerSecond ?? 100,
    stderrInErrors: t.stderrInErrors ?? false,
    maxQueuedBytes: t.maxQueuedBytes ?? 16 * 1024 * 1024,
    upstream: t.upstream ?? { mode: 'per-session', children: 1 },
    ...(t.circuitBreaker === undefined ? {} : { circuitBreaker: t.circuitBreaker }),
    ...(t.sandbox === undefined ? {} : { sandbox: t.sandbox }),
    ...(t.limits === undefined ? {} : { limits: t.limits }),
  };
}

export function remoteTarget(name: string, t: RemoteTestTarget): RemoteTargetConfig {
  return {
    type: t.type,
    name,
    url: t.url,
    headers: t.headers ?? {},
    forwardAuthorization: t.forwardAuthorization ?? false,
    principalHeaders: t.principalHeaders ?? {},
    tokenExchange: t.tokenExchange,
    maxConnections: t.maxConnections ?? 0,
    timeouts: t.timeouts ?? { requestMs: 30_000, resetOnProgress: true, maxTotalMs: 0 },
    restart: t.restart ?? { onExit: 'end', maxRestarts: 3, initialBackoffMs: 100, maxBackoffMs: 2_000 },
    maxMessageBytes: t.maxMessageBytes ?? 8 * 1024 * 1024,
    ...(t.protocol === undefined ? {} : { protocol: t.protocol }),
    ...(t.circuitBreaker === undefined ? {} : { circuitBreaker: t.circuitBreaker }),
  };
}

const toTarget = (name: string, t: TestTarget | RemoteTestTarget): TargetConfig =>
  'url' in t ? remoteTarget(name, t) : stdioTarget(name, t);

export function buildConfig(options: TestGatewayOptions): GatewayConfig {
  const targets = new Map(Object.entries(options.targets).map(([name, t]) => [name, toTarget(name, t)]));
  return {
    listen: { host: '127.0.0.1', port: 0 },
    allowedOrigins: options.allowedOrigins,
    allowedHosts: options.allowedHosts,
    limits: {
      maxBodyBytes: 4 * 1024 * 1024,
      maxSessions: 100,
      replayEvents: 256,
      replayBytes: 4 * 1024 * 1024,
      pendingServerMessages: 256,
      requestTimeoutMs: 30_000,
      maxConnections: 4_096,
      maxConnectionsPerAddress: 1_024,
      ...options.limits,
    },
    session: {
      idleTtlMs: 60_000,
      keepAliveMs: 15_000,
      shortIdleTtlMs: 60_000,
      initDeadlineMs: 10_000,
      maxUninitialized: 64,
      evictIdleMs: 120_000,
      // The schema's defaults (config/schema.ts): a suite like the official conformance harness opens
      // dozens of sessions it never deletes, and none is idle past the floor within a test.
      maxChildren: 128,
      maxChildrenPerTarget: 64,
      stateless: { hostsPerCaller: 4, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 256, maxParkedPerCaller: 16, maxParked: 1_024 },
      ...options.session,
    },
    websocket: { pingIntervalMs: 15_000, maxBufferedBytes: 16 * 1024 * 1024, ...options.websocket },
    ...(options.health === undefined ? {} : { health: options.health }),
    shutdownGraceMs: options.shutdownGraceMs ?? 2_000,
    logging: { level: options.logLines ? 'debug' : 'silent' },
    targets,
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
    ...(options.packages === undefined ? {} : { packages: options.packages }),
  };
}

/** A logger for a test gateway: silent, or collecting its JSON lines into `lines` when given. */
export function createTestLogger(level: LogLevel, lines: string[] | undefined): Logger {
  return createLogger({
    level,
    destination: new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (lines) lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    }),
  });
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const config = buildConfig(options);
  const logger = createTestLogger(config.logging.level, options.logLines);
  const gateway = await startGateway(config, { logger, env: options.env ?? {} });
  const single = config.targets.size === 1;
  return {
    ...gateway,
    close: () => gateway.close(),
    logger,
    mcpUrl(target?: string) {
      if (target === undefined && single) return new URL('/mcp', gateway.url);
      return new URL(`/servers/${target ?? [...config.targets.keys()][0]}/mcp`, gateway.url);
    },
  };
}

/** Command line that runs @modelcontextprotocol/server-everything over stdio on our pinned Node. */
export function everythingServer(): TestTarget {
  return {
    command: process.execPath,
    args: [fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)), 'stdio'],
  };
}
