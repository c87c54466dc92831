/**
 * An upstream connection: one transport to one target plus the correlator that owns its id space.
 * Knows nothing of downstream sessions; it reports an unexpected end through `onexit` and fails
 * every pending request with the same reason first, so nothing waits on a dead upstream.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AgentPool } from '../transport/http-pool.ts';
import { scrubbingLogger, scrubText } from '../log/scrub.ts';
import { connectionSecrets } from './secrets.ts';
import { principalEnv, principalHeaders, subjectTokenOf } from './identity.ts';
import type { Caller } from './caller.ts';
import type { TokenCache } from './token-cache.ts';
import type { UserOAuth } from './oauth/user-oauth.ts';
import { createLegacySseTransport } from '../transport/legacy-sse.ts';
import { createStdioTransport } from '../transport/stdio.ts';
import { upstreamHeaders } from '../transport/http-body.ts';
import { createStatelessHttpWire } from '../transport/stateless-http.ts';
import { createStreamableHttpTransport } from '../transport/streamable-http.ts';
import type { Transport } from '../transport/types.ts';
import { createCorrelator, type Correlator } from './correlator.ts';
import { createEraMemory, type EraMemory } from './era-probe.ts';
import { createEraTransport } from './era-transport.ts';
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
  /** The gateway's agents (remote targets only). */
  agents?: AgentPool | undefined;
  /**
   * Who the upstream works for (caller.ts), by reference: its principal fills the target's
   * principalHeaders / principalEnv; its Authorization as the connection opens is what
   * `forwardAuthorization` sends, its latest the subject of the next token exchange.
   */
  caller?: Caller | undefined;
  /** Exchanged tokens per (target, principal), for targets with `tokenExchange`. */
  tokens?: TokenCache | undefined;
  /** Each user's own upstream tokens, for targets with `oauth.perUser` (oauth/user-oauth.ts). */
  userOAuth?: UserOAuth | undefined;
  /** What the gateway learnt of its HTTP targets' eras (`protocol: auto`); none: ask every time. */
  eras?: EraMemory | undefined;
}

/** The probe's deadline when the target sets no startup deadline (as the handshake's default). */
const DISCOVER_TIMEOUT_MS = 10_000;

export type UpstreamTransport = Transport & { readonly pid?: number | undefined; garbage?(): StdoutGarbage };

/** The target's transport, and what to do once it is closed for good (give its agent back). */
function createTransport(
  { target, logger, agents, caller, tokens, userOAuth, eras }: UpstreamOptions,
  scrub: (text: string) => string,
): { transport: UpstreamTransport; done(): void } {
  const principal = caller?.principal;
  if (target.type === 'stdio') {
    const extraEnv = principalEnv(target.principalEnv, principal);
    return { transport: createStdioTransport({ target, logger, extraEnv, scrub }), done: () => undefined };
  }
  if (agents === undefined) throw new GatewayError('GW_INTERNAL', `No agent pool for remote target "${target.name}"`);
  const agent = agents.acquire(target);
  let released = false;
  const done = () => {
    if (!released) agents.release(target);
    released = true;
  };
  // The caller's own token (its latest) is only the subject of the exchange; the upstream sees the exchanged one.
  // With `oauth.perUser` the principal's own token from the vault (or GW_UPSTREAM_AUTH_REQUIRED).
  const perUser = target.oauth !== undefined && userOAuth !== undefined;
  // The token this connection sent last: a late 401 for an older one (a DELETE after a refresh) changes nothing.
  let sent: string | undefined;
  const credential = perUser
    ? async () => (sent = await userOAuth.tokenFor(target, principal))
    : target.tokenExchange !== undefined && tokens !== undefined
      ? () => tokens.tokenFor(target, principal, subjectTokenOf(principal, caller?.authorization))
      : undefined;
  const credentialRejected = perUser ? () => userOAuth.rejected(target, principal, sent) : credential !== undefined ? () => tokens?.forget(target, principal) : undefined;
  // Forwarded (forwardAuthorization): the caller's Authorization as this connection opens.
  const authorization = caller?.authorization;
  const scopeRefused = perUser ? (challenge: string) => userOAuth.insufficientScope(target, principal, challenge) : undefined;
  const remote = { target, logger, authorization, agent, agents, extraHeaders: principalHeaders(target.principalHeaders, principal), credential, credentialRejected, scopeRefused };
  if (target.type === 'sse') return { transport: createLegacySseTransport(remote), done };
  const legacy = () => createStreamableHttpTransport(remote);
  const protocol = target.protocol ?? 'auto';
  const memory = eras ?? createEraMemory();
  // The era is known to be 2025 (configured, or learnt from an earlier probe), or the target
  // exchanges tokens (the 2026 wire does not yet): no probe, no wrapper.
  if (protocol === '2025' || credential !== undefined || (protocol === 'auto' && memory.get(target, principal) === '2025')) return { transport: legacy(), done };
  const headers = upstreamHeaders(target, authorization, remote.extraHeaders);
  const wire = createStatelessHttpWire({ target, logger, agent, headers });
  const discoverTimeoutMs = target.timeouts.startupMs ?? DISCOVER_TIMEOUT_MS;
  const forClient2025 = caller?.held !== true;
  return { transport: createEraTransport({ target, logger, memory, principal, wire, legacy, discoverTimeoutMs, forClient2025 }), done };
}

export function createUpstreamConnection(options: UpstreamOptions): UpstreamConnection {
  // Every line this connection's transport and correlator write is scrubbed of the secrets the
  // gateway gave the upstream (an upstream may echo them): log/scrub.ts, upstream/secrets.ts.
  const secrets = connectionSecrets(options);
  const scrubbed = { ...options, logger: scrubbingLogger(options.logger, secrets) };
  const { transport, done } = createTransport(scrubbed, (text) => scrubText(text, secrets()));
  return connectionOver(transport, scrubbed, done);
}

/**
 * An upstream connection over a transport someone else made (the in-memory pair in unit tests of
 * the sessions). `done` runs once when the transport is closed for good.
 */
export function connectionOver(
  transport: UpstreamTransport,
  { target, logger }: Pick<UpstreamOptions, 'target' | 'logger'>,
  done: () => void = () => undefined,
): UpstreamConnection {
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
      closed = transport.close().finally(done);
      return closed;
    },
  };

  transport.onclose = (reason) => {
    if (closing) return;
    closing = true;
    done();
    const error =
      reason ?? new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${target.name}" closed the connection`, { target: target.name });
    logger.warn({ err: { code: error.code, message: error.message, ...error.details } }, 'upstream ended unexpectedly');
    correlator.destroy(error);
    connection.onexit?.(error);
  };

  return connection;
}
