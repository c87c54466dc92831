/**
 * One pooled keep-alive undici Agent per remote target, shared by every session of that target, so
 * sessions reuse warm connections (and TLS sessions) instead of dialling per request. Keyed by the
 * target's frozen config object: two gateways in one process (tests) never share or close each
 * other's pools. `closeUpstreamAgents` is called by the composition root on shutdown.
 */
import { Agent } from 'undici';
import type { RemoteTargetConfig, TargetConfig } from '../config/types.ts';

const agents = new Map<RemoteTargetConfig, Agent>();

/**
 * No headers or body timeout on the agent: a request's deadline is the correlator's (per target,
 * reset by progress), and SSE streams legitimately stay quiet for long. Connecting is bounded by
 * undici's default connect timeout (10 s).
 */
export function agentFor(target: RemoteTargetConfig): Agent {
  let agent = agents.get(target);
  if (agent === undefined) {
    agent = new Agent({
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(target.maxConnections > 0 ? { connections: target.maxConnections } : {}),
    });
    agents.set(target, agent);
  }
  return agent;
}

/**
 * Targets whose endpoint answered a GET with 405: the server offers no SSE stream at that endpoint
 * (MCP basic/transports, "Listening for Messages from the Server"), a property of the endpoint, not
 * of one session, so later sessions skip the GET (a round trip per session set up).
 */
const withoutGetStream = new WeakSet<RemoteTargetConfig>();

/** False once the target's endpoint has answered a GET with 405. */
export function offersGetStream(target: RemoteTargetConfig): boolean {
  return !withoutGetStream.has(target);
}

/** Notes a 405 to a GET from this target's endpoint. */
export function noteNoGetStream(target: RemoteTargetConfig): void {
  withoutGetStream.add(target);
}

/** Closes the pools of these targets (all when omitted); open streams are destroyed. */
export async function closeUpstreamAgents(targets?: Iterable<TargetConfig>): Promise<void> {
  const chosen = targets === undefined ? [...agents.keys()] : [...targets].filter((t): t is RemoteTargetConfig => t.type !== 'stdio');
  const closing: Promise<void>[] = [];
  for (const target of chosen) {
    const agent = agents.get(target);
    if (agent === undefined) continue;
    agents.delete(target);
    // Sessions have ended by now; whatever is still open would only hold the shutdown up.
    closing.push(agent.destroy().catch(() => undefined));
  }
  await Promise.all(closing);
}
