/**
 * An in-process gateway with several targets behind one URL (aggregate endpoints), for integration
 * tests: targets as in support/gateway.ts plus per-target exposure settings and groups.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { defaultExposure, type AggregateConfig, type GatewayConfig, type TargetConfig, type TargetExposureConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger, type TestTarget } from './gateway.ts';
import { fileURLToPath } from 'node:url';

/**
 * A stdio target as in support/gateway.ts, or `{ target }`: a ready TargetConfig of any type (a
 * remote one), used as is. Either way with optional aggregate exposure settings.
 */
export type AggregateTarget = (TestTarget | { target: TargetConfig }) & { exposure?: Partial<TargetExposureConfig> };

export interface AggregateGatewayOptions {
  targets: Record<string, AggregateTarget>;
  groups?: Record<string, string[]>;
  separator?: string;
  listTimeoutMs?: number;
  logLines?: string[];
}

/** The config an aggregate test gateway runs with. */
export function buildAggregateConfig(options: AggregateGatewayOptions): GatewayConfig {
  const stdio: Record<string, TestTarget> = {};
  for (const [name, t] of Object.entries(options.targets)) if (!('target' in t)) stdio[name] = t;
  const base = buildConfig({ targets: stdio, ...(options.logLines ? { logLines: options.logLines } : {}) });
  // Rebuilt in the order given, ready configs in their place.
  const targets = new Map<string, TargetConfig>();
  for (const [name, t] of Object.entries(options.targets)) targets.set(name, 'target' in t ? t.target : (base.targets.get(name) as TargetConfig));
  const exposure = new Map<string, TargetExposureConfig>();
  for (const [name, t] of Object.entries(options.targets)) exposure.set(name, { ...defaultExposure(name), ...t.exposure });
  const aggregate: AggregateConfig = {
    separator: options.separator ?? '__',
    listTimeoutMs: options.listTimeoutMs ?? 20_000,
    exposure,
    groups: new Map(Object.entries(options.groups ?? {})),
  };
  return { ...base, targets, aggregate };
}

export async function startAggregateGateway(options: AggregateGatewayOptions): Promise<RunningGateway> {
  const config = buildAggregateConfig(options);
  return startGateway(config, { logger: createTestLogger(config.logging.level, options.logLines) });
}

/** An SDK client connected to `path` of the gateway. */
export async function connectClient(
  gateway: RunningGateway,
  path = '/mcp',
  capabilities: ConstructorParameters<typeof Client>[1] = {},
): Promise<Client> {
  const client = new Client({ name: 'aggregate-test', version: '1.0.0' }, capabilities);
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gateway.url)));
  return client;
}

/** Command line of the collider fixture (colliding, long and odd tool names). */
export function colliderServer(...args: string[]): TestTarget {
  return { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/collider-server.mjs', import.meta.url)), ...args] };
}

/** Text of a tool result's content. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** The McpError a client call rejects with (anything else is rethrown; no rejection fails). */
export async function errorOf(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected an error');
}
