/**
 * An upstream connection: one transport to one target plus the correlator that owns its id space.
 * Knows nothing of downstream sessions; it reports an unexpected end through `onexit` and fails
 * every pending request with the same reason first, so nothing waits on a dead upstream.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { createLegacySseTransport } from '../transport/legacy-sse.ts';
import { createStdioTransport } from '../transport/stdio.ts';
import { createStreamableHttpTransport } from '../transport/streamable-http.ts';
import type { Transport } from '../transport/types.ts';
import { createCorrelator, type Correlator } from './correlator.ts';
import type { StdoutGarbage } from '../transport/stdout-reader.ts';

export interface UpstreamConnection {
  readonly target: TargetConfig;
  readonly correlator: Correlator;
  /** Child pid for stdio targets (for logs and tests). */
  readonly pid: number | undefined;
  /** Stdout lines that were not messages (stdio targets only): named in a start-up error. */
  garbage?(): StdoutGarbage;
  /** Opens the wire (spawns the child). Rejects with GW_UPSTREAM_SPAWN_FAILED and the like. */
  start(): Promise<void>;
  /** Graceful close; pending requests fail with GW_UPSTREAM_CLOSED. Idempotent. */
  close(reason?: string): Promise<void>;
  /** Set by the owner: the upstream went away without being asked to. Called at most once. */
  onexit?: (reason: GatewayError) => void;
}

export interface UpstreamOptions {
  target: TargetConfig;
  logger: Logger;
  /** The downstream's own Authorization; remote transports send it only where the target opts in. */
  authorization?: string | undefined;
}

function createTransport({ target, logger, authorization }: UpstreamOptions): Transport & { readonly pid?: number | undefined; garbage?(): StdoutGarbage } {
  switch (target.type) {
    case 'stdio':
      return createStdioTransport({ target, logger });
    case 'http':
      return createStreamableHttpTransport({ target, logger, authorization });
    case 'sse':
      return createLegacySseTransport({ target, logger, authorization });
  }
}

export function createUpstreamConnection(options: UpstreamOptions): UpstreamConnection {
  const { target, logger } = options;
  const transport = createTransport(options);
  const correlator = createCorrelator({ transport, target: target.name, logger });
  let closing = false;
  let closed: Promise<void> | undefined;

  const connection: UpstreamConnection = {
    target,
    correlator,
    get pid() {
      return transport.pid;
    },
    garbage: () => transport.garbage?.() ?? { lines: 0, first: undefined },
    start: () => transport.start(),
    close(reason = 'Session ended') {
      if (closed) return closed;
      closing = true;
      correlator.destroy(new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" was closed: ${reason}`, { target: target.name, reason }));
      closed = transport.close();
      return closed;
    },
  };

  transport.onclose = (reason) => {
    if (closing) return;
    closing = true;
    const error =
      reason ?? new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" closed the connection`, { target: target.name });
    logger.warn({ err: { code: error.code, message: error.message, ...error.details } }, 'upstream ended unexpectedly');
    correlator.destroy(error);
    connection.onexit?.(error);
  };

  return connection;
}
