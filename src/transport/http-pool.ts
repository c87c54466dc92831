/**
 * The gateway's pooled keep-alive undici Agents: one per remote target, shared by every session of
 * that target, so sessions reuse warm connections (and TLS sessions) instead of dialling per
 * request. One pool per gateway (the Runtime makes it), keyed by the target's frozen config object:
 * two gateways in one process never share or close each other's agents.
 *
 * Users (upstream connections) acquire an agent and release it when they close. A reload tells the
 * pool which targets are in force (`retain`); the agent of a target that left the config (or was
 * changed: a new object) closes when its last user is done, since sessions of a removed path carry
 * on until they end. `close()` destroys every agent the pool ever made, whatever config made it.
 */
import { Agent } from 'undici';
import type { RemoteTargetConfig, TargetConfig } from '../config/types.ts';

export interface AgentPool {
  /** The target's agent (made on first use); pair with `release`. */
  acquire(target: RemoteTargetConfig): Agent;
  /** A user of the target's agent is done with it. */
  release(target: RemoteTargetConfig): void;
  /** False once the target's endpoint has answered a GET with 405. */
  offersGetStream(target: RemoteTargetConfig): boolean;
  /** Notes a 405 to a GET from this target's endpoint. */
  noteNoGetStream(target: RemoteTargetConfig): void;
  /** The targets of the config now in force; the agents of others close once unused. */
  retain(targets: Iterable<TargetConfig>): void;
  /** Destroys every agent (open streams too). Later acquires get a fresh agent. */
  close(): Promise<void>;
  /** Agents open now (tests, logs). */
  readonly size: number;
}

interface Entry {
  readonly agent: Agent;
  users: number;
  retired: boolean;
}

/**
 * No headers or body timeout on the agent: a request's deadline is the correlator's (per target,
 * reset by progress), and SSE streams legitimately stay quiet for long. Connecting is bounded by
 * undici's default connect timeout (10 s).
 */
function newAgent(target: RemoteTargetConfig): Agent {
  return new Agent({
    headersTimeout: 0,
    bodyTimeout: 0,
    ...(target.maxConnections > 0 ? { connections: target.maxConnections } : {}),
  });
}

export function createAgentPool(): AgentPool {
  const entries = new Map<RemoteTargetConfig, Entry>();
  /**
   * Targets whose endpoint answered a GET with 405: the server offers no SSE stream there (MCP
   * basic/transports, "Listening for Messages from the Server"), a property of the endpoint, not of
   * one session, so later sessions skip the GET (a round trip per session set up).
   */
  const withoutGetStream = new WeakSet<RemoteTargetConfig>();

  const destroy = (target: RemoteTargetConfig, entry: Entry) => {
    entries.delete(target);
    // Its sessions have ended: whatever is still open would only hold the shutdown up.
    return entry.agent.destroy().catch(() => undefined);
  };

  return {
    acquire(target) {
      let entry = entries.get(target);
      if (entry === undefined) {
        entry = { agent: newAgent(target), users: 0, retired: false };
        entries.set(target, entry);
      }
      entry.users++;
      return entry.agent;
    },
    release(target) {
      const entry = entries.get(target);
      if (entry === undefined) return;
      entry.users = Math.max(0, entry.users - 1);
      if (entry.users === 0 && entry.retired) void destroy(target, entry);
    },
    offersGetStream: (target) => !withoutGetStream.has(target),
    noteNoGetStream: (target) => void withoutGetStream.add(target),
    retain(targets) {
      const kept = new Set<TargetConfig>(targets);
      for (const [target, entry] of entries) {
        entry.retired = !kept.has(target);
        if (entry.retired && entry.users === 0) void destroy(target, entry);
      }
    },
    async close() {
      await Promise.all([...entries].map(([target, entry]) => destroy(target, entry)));
    },
    get size() {
      return entries.size;
    },
  };
}
