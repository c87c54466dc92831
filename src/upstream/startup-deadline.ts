/**
 * The deadline of an upstream's start-up handshake (spawn + the answer to initialize), used by
 * every place that opens an upstream: a session's own connection, an aggregate member, a shared
 * pool's child.
 */
import type { TargetConfig, TimeoutPolicy } from '../config/types.ts';

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
