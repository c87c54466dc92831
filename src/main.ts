/**
 * Composition root: config -> logger -> session store -> HTTP server. Nothing imports this file
 * except cli.ts and tests that need a whole gateway.
 */
import type { GatewayConfig } from './config/types.ts';
import type { Logger } from './log/logger.ts';

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8080 (the port actually bound when config asked for 0). */
  readonly url: string;
  readonly port: number;
  /** Graceful stop: refuse new work, let in-flight requests finish up to the grace, kill children. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Use this logger instead of creating one from config.logging. */
  logger?: Logger;
}

export async function startGateway(config: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  void config;
  void options;
  throw new Error('not yet composed');
}
