/**
 * Composition root: config -> logger -> session store -> HTTP server. Nothing imports this file
 * except cli.ts and tests that need a whole gateway.
 */
import type { GatewayConfig } from './config/types.ts';
import { createHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log/logger.ts';
import { createSessionStore } from './session/store.ts';
import { closeUpstreamAgents } from './transport/http-pool.ts';
import { killAllChildrenNow } from './transport/stdio.ts';

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

let exitHookInstalled = false;

export async function startGateway(config: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger({ level: config.logging.level });
  if (!exitHookInstalled) {
    // Last line of defence: whatever way this process exits, no child outlives it.
    process.on('exit', killAllChildrenNow);
    exitHookInstalled = true;
  }
  let ready = true;
  const store = createSessionStore({ config, logger });
  const app = createHttpServer({ config, store, logger, isReady: () => ready });
  await app.listen({ host: config.listen.host, port: config.listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, targets: [...config.targets.keys()] }, 'switchboard listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        ready = false;
        logger.info({ graceMs: config.shutdownGraceMs, sessions: store.size }, 'shutting down');
        // Stop accepting first (new requests on kept-alive sockets get 503), then drain sessions.
        const closed = app.close();
        await store.close(config.shutdownGraceMs);
        // Every session has ended and every stream with it: sockets still open are idle keep-alive
        // ones (or hold a response that can no longer make progress); they would hold close() up
        // until their keep-alive timeout.
        app.server.closeAllConnections();
        await closed;
        // Sessions sent their DELETEs while ending; the remote targets' pooled sockets go last.
        await closeUpstreamAgents(config.targets.values());
        logger.info('stopped');
      })();
      return closing;
    },
  };
}
