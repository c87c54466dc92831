/**
 * The deadline of an upstream's start-up handshake (spawn + the answer to initialize), used by
 * every place that opens an upstream: a session's own connection, an aggregate member, a shared
 * pool's child.
 */
import { randomUUID } from 'node:crypto';
import type { TargetConfig, TimeoutPolicy } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { UpstreamConnection } from './connection.ts';

/** When a hand-built target sets nothing (the config loader always does): see `startupTimeoutMs` in the schema. */
const DEFAULT_STARTUP_MS = 10_000;

/**
 * Its own deadline, shorter than a tool call's: clients give up on a connect long before
 * 5 minutes (the Inspector after 15 s, the SDK after 60 s), and a server that has said nothing by
 * then is hung or is not an MCP server. Progress does not extend it.
 */
export function handshakeTimeouts(target: TargetConfig): TimeoutPolicy {
  const startupMs = target.timeouts.startupMs ?? DEFAULT_STARTUP_MS;
  return { requestMs: startupMs, resetOnProgress: false, maxTotalMs: 0, startupMs };
}

/** Visible ASCII only, and short: the excerpt goes to the log, never to the client. */
const EXCERPT_CHARS = 120;

function excerpt(text: string): string {
  const visible = text.replace(/[^\x20-\x7e]/g, '?');
  return visible.length > EXCERPT_CHARS ? `${visible.slice(0, EXCERPT_CHARS)}...` : visible;
}

/**
 * The error a client gets when an upstream's handshake runs out of time: the code, the target and
 * a short description. What the child printed instead (a banner, a usage text, a shell prompt)
 * goes to the log only, under a correlation id the client error carries, so the operator finds it.
 * Other failures pass unchanged.
 */
export function explainStartupFailure(error: GatewayError, connection: UpstreamConnection, logger: Logger): GatewayError {
  if (error.code !== 'GW_UPSTREAM_TIMEOUT') return error;
  const target = connection.target;
  const startupMs = target.timeouts.startupMs ?? DEFAULT_STARTUP_MS;
  const garbage = connection.garbage?.() ?? { lines: 0, first: undefined };
  const correlationId = randomUUID();
  const within = `within ${Math.round(startupMs / 100) / 10} s`;
  const printed = garbage.first === undefined ? undefined : excerpt(garbage.first);
  logger.warn(
    { correlationId, startupMs, nonJsonLines: garbage.lines, ...(printed === undefined ? {} : { printed }) },
    'upstream did not answer initialize before the start-up deadline',
  );
  const what =
    garbage.lines > 0
      ? `wrote no MCP message ${within}; it printed output that is not JSON-RPC`
      : `did not answer initialize ${within}`;
  return new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target.name}" ${what} (see the gateway log, correlation id ${correlationId})`, {
    ...error.details,
    target: target.name,
    correlationId,
  });
}
