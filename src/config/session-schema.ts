/**
 * The `gateway.limits` and `gateway.session` parts of the config schema (schema.ts composes them):
 * what one request, one session and the gateway as a whole may hold, and for how long. Every
 * default carries its reason; docs/configuration.md mirrors them.
 */
import { z } from 'zod';
import { anObject, MAX_DURATION_MS, MiB, nonNegative, positive } from './schema-kit.ts';

export const limitsSchema = z.strictObject({
  /** 16 MiB: room for large tool arguments (file contents, images) without unbounded buffering. */
  maxBodyBytes: positive().default(16 * MiB),
  /** 1000: each session may own child processes; cap them before the machine runs out. */
  maxSessions: positive().default(1_000),
  /** 512 events / 8 MiB per session for SSE resumption: a reconnect after a short drop loses nothing. 0 disables. */
  replayEvents: nonNegative().default(512),
  replayBytes: nonNegative().default(8 * MiB),
  /** 256: server-to-client messages held until the client opens its GET stream; 0 drops them. */
  pendingServerMessages: nonNegative().default(256),
  /**
   * 30 s to receive a whole request, headers and body: a 16 MiB body fits on a slow link, and a
   * client that starts a request and never finishes it (slowloris) loses its socket with a 408.
   * Answers may take as long as they take: this bounds only what the client sends.
   */
  requestTimeoutMs: positive(MAX_DURATION_MS).default(30_000),
  /** 4096 open connections in all: well inside a default descriptor limit, above maxSessions' needs. */
  maxConnections: positive().default(4_096),
  /**
   * 1024 per client address: one client cannot take every connection. Behind a proxy every client
   * shares the proxy's address: raise it there, or set 0 (no per-address cap).
   */
  maxConnectionsPerAddress: nonNegative().default(1_024),
  /**
   * 256 requests in flight per session: room for a client that fans out a hundred calls at once
   * (agents, batch jobs), while it takes 16 such sessions to fill `maxInflight`. Over it: 503
   * GW_OVERLOADED.
   */
  maxInflightPerSession: positive().default(256),
  /**
   * 4096 requests in flight in all: each holds an entry upstream and a response stream here, so
   * the gateway's memory under a burst stays bounded; above what 1000 sessions use in practice.
   */
  maxInflight: positive().default(4_096),
}, anObject);

/** Sessions the gateway holds for 2026 clients (docs/eras.md). */
const statelessSchema = z.strictObject({
  /**
   * 4 per endpoint, principal and declared client capabilities: each is one upstream session (for a
   * stdio target, one child), and a call that may ask the client for input holds one alone.
   */
  hostsPerCaller: positive().default(4),
  /** 60 s: a burst of stateless calls reuses its upstream session; a quiet caller's child goes soon. */
  hostIdleMs: positive(MAX_DURATION_MS).default(60_000),
  /** 120 s: time for a person to answer an elicitation; the waiting upstream call is cancelled after it. */
  inputWaitMs: positive(MAX_DURATION_MS).default(120_000),
  /** 256 open `subscriptions/listen` streams: each holds a connection and keeps an upstream session open. */
  maxListenStreams: positive().default(256),
  /**
   * 16 calls parked on an `input_required` round per endpoint and principal: a person answers a
   * few at a time; more is a caller that never comes back. Past it: 503 GW_INPUT_ROUNDS_LIMIT.
   */
  maxParkedPerCaller: positive().default(16),
  /** 1024 parked calls in all: each keeps an upstream call waiting and, at worst, a held session. */
  maxParked: positive().default(1_024),
}, anObject);

export const sessionSchema = z.strictObject({
  /** 30 minutes: a client that went away without DELETE should not keep children alive for long. */
  idleTtlMs: positive(MAX_DURATION_MS).default(1_800_000),
  /** 15 s: below the 30-60 s idle timeouts of common proxies and load balancers. */
  keepAliveMs: positive(MAX_DURATION_MS).default(15_000),
  // Bounds on abandoned and never-used sessions (src/session/limits.ts).
  /**
   * 5 minutes: a client that never opened a GET stream (one session per command, SDK close()
   * without DELETE) rarely comes back; if it does, it gets 404 and re-initializes as the spec intends.
   */
  shortIdleTtlMs: positive(MAX_DURATION_MS).default(300_000),
  /** 10 s: a WebSocket or legacy SSE session that has sent no initialize by then holds a slot for nothing. */
  initDeadlineMs: positive(MAX_DURATION_MS).default(10_000),
  /** 64: un-initialized sessions at once; beyond it the oldest is ended, so idle sockets cannot fill maxSessions. */
  maxUninitialized: positive().default(64),
  /**
   * 2 minutes: a session is ended to make room for a new one only after this long with no request
   * and nothing in flight. Long enough that a client between two calls, or an agent waiting for its
   * model, is never taken for gone; short enough that the slots of clients that left without DELETE
   * come back within minutes. A new session that finds no such session is refused (503 +
   * Retry-After), never served by ending a working one.
   */
  evictIdleMs: positive(MAX_DURATION_MS).default(120_000),
  /**
   * 128 per-session stdio children at once. Sized for a team on one small machine: 64 clients on
   * the busiest server plus room for the others. An idle child costs memory, not CPU (a small Node
   * server 40-60 MiB, so about 6-8 GiB at the cap); lower it on a machine with less memory, or use
   * `upstream.mode: shared` for servers that keep no per-client state.
   */
  maxChildren: positive().default(128),
  /**
   * 64: one server can serve a team of 64 clients at once (each keeping its own child), while one
   * heavy server (a browser, a language server) still cannot take the whole budget of children.
   */
  maxChildrenPerTarget: positive().default(64),
  /** How 2026-07-28 (stateless) requests are served on 2025 upstreams (src/session/stateless/). */
  stateless: statelessSchema.prefault({}),
}, anObject);

/** WebSocket downstreams (`/servers/<name>/ws`); see docs/downstreams.md. */
