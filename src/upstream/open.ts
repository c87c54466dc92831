/**
 * Opening an upstream connection for one downstream session: its own (a child per session, a
 * remote upstream session) or, for stdio targets in shared mode, a lease on a pooled child with the
 * same interface. Sessions receive a factory of this shape rather than importing one, so a test can
 * hand them upstreams on the in-memory transport.
 */
import type { TargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../jsonrpc/versions.ts';
import type { AgentPool } from '../transport/http-pool.ts';
import { createUpstreamConnection, type UpstreamConnection } from './connection.ts';
import { createEraMemory } from './era-probe.ts';
import type { Caller } from './caller.ts';
import type { SharedPools } from './shared-pool.ts';
import type { TokenCache } from './token-cache.ts';
import type { UserOAuth } from './oauth/user-oauth.ts';

export interface OpenUpstreamOptions {
  target: TargetConfig;
  /** The session's logger. */
  logger: Logger;
  /** The gateway's logger: a shared child outlives the session that started it. */
  poolLogger: Logger;
  /**
   * Who the session serves (caller.ts): its principal fills the target's per-principal headers or
   * env, its Authorization reaches targets that opt in or is a token exchange's subject. Absent:
   * nobody (a warm spare).
   */
  caller?: Caller | undefined;
}

/** Makes a new (not yet started) upstream connection for one session. */
export type UpstreamFactory = (options: OpenUpstreamOptions) => UpstreamConnection;

/**
 * The gateway's factory: real transports over its agents, its shared pools where a target asks,
 * its exchanged tokens for targets with `tokenExchange`, each user's own for targets with `oauth`.
 */
export function createUpstreamFactory(agents: AgentPool, pools: SharedPools, tokens?: TokenCache, userOAuth?: UserOAuth): UpstreamFactory {
  // What the probes learnt of the HTTP targets' eras, for as long as this gateway lives.
  const eras = createEraMemory();
  return ({ target, logger, poolLogger, caller }) => {
    if (target.type === 'stdio' && target.upstream?.mode === 'shared') {
      // A child started with one principal's variables serves that principal only.
      const perPrincipal = Object.keys(target.principalEnv).length > 0;
      return pools.poolFor({ target, logger: poolLogger, versions: SUPPORTED_PROTOCOL_VERSIONS, ...(perPrincipal ? { principal: caller?.principal } : {}) }).lease();
    }
    return createUpstreamConnection({ target, logger, agents, caller, tokens, userOAuth, eras });
  };
}
