/**
 * Who is calling, in one shape for every layer that asks: `Principal` is what auth/ proves (a
 * token, an API key, or nobody), `Caller` is one downstream as the gateway serves it (the principal,
 * its latest credential, how it came). They live here, the lowest layer that reads them (the
 * per-principal identity of an upstream, identity.ts); the policy (router/), the sessions
 * (session/) and auth/ use these types rather than declaring their own.
 */
import type { DownstreamTransport } from '../log/observer.ts';

/**
 * The principal every authenticated request carries down to the session layer as plain data. Its
 * `id` binds sessions (a session is unknown to every other principal) and keys anything that must
 * never serve two principals.
 */
export interface Principal {
  /** `<issuer>#<subject>` for a token, `key:<name>` for an API key, `anonymous` otherwise. */
  readonly id: string;
  /** `jwt` when the caller proved itself with a verified bearer token (the only kind exchanged). */
  readonly kind: 'jwt' | 'api-key' | 'anonymous';
  /** The token's `sub`, the key's name, or `anonymous`: what `{sub}` becomes in upstream templates. */
  readonly subject: string;
  readonly scopes: ReadonlySet<string>;
  /**
   * The token claims the policy names, as strings (auth/claims.ts); undefined for keys and
   * anonymous. A claim name missing here was not captured (a reload named it later): see
   * router/policy.ts `claimsMatch`.
   */
  readonly claims?: Readonly<Record<string, readonly string[]>> | undefined;
  /**
   * Claims whose values were cut to the bounds (too many values, or a value too long: auth/claims.ts).
   * What was cut is unknown, so a deny rule naming such a claim applies; allow rules see the kept values only.
   */
  readonly claimsCut?: ReadonlySet<string> | undefined;
}

export const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', kind: 'anonymous', subject: 'anonymous', scopes: new Set<string>() });

/**
 * One downstream caller as a session serves it: made once per session by the session store and
 * passed by reference down to the session's upstream connections, in place of separate principal,
 * Authorization and downstream options.
 */
export interface Caller {
  /** The authenticated principal (gateway.auth): the session is unknown to anyone else; the policy and per-principal identity read it. */
  readonly principal: Principal | undefined;
  /**
   * The downstream's own Authorization header, the latest its principal presented. Never sent
   * upstream unless a target opts in (`forwardAuthorization`: a connection sends the one it was
   * opened with); a token exchange presents the latest as its subject. Only the session store
   * changes it (`SessionStore.noteAuthorization`), never a read.
   */
  readonly authorization: string | undefined;
  /** Held by the gateway for 2026 clients (session/stateless/): no client may address it by id. */
  readonly held?: boolean | undefined;
  /** How it reached the gateway (default: Streamable HTTP): named in its spans and metrics. */
  readonly transport?: DownstreamTransport | undefined;
}
