/**
 * Who is calling: the principal every authenticated request carries down to the session layer as
 * plain data. Its `id` binds sessions (a session is unknown to every other principal) and keys
 * anything that must never serve two principals.
 */
export interface Principal {
  /** `<issuer>#<subject>` for a token, `key:<name>` for an API key, `anonymous` otherwise. */
  readonly id: string;
  readonly kind: 'jwt' | 'api-key' | 'anonymous';
  /** The token's `sub`, the key's name, or `anonymous`: what `{sub}` becomes in upstream templates. */
  readonly subject: string;
  readonly scopes: ReadonlySet<string>;
  /** A token's claims that the policy names (auth/claims.ts); undefined for keys and anonymous. */
  readonly claims?: Readonly<Record<string, readonly string[]>> | undefined;
  /** Claims that lost values to the bounds (auth/claims.ts): a deny rule naming one applies. */
  readonly claimsCut?: ReadonlySet<string> | undefined;
}

export const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', kind: 'anonymous', subject: 'anonymous', scopes: new Set<string>() });

/**
 * Why a credential was refused, for the log only: clients get the same 401 whatever the reason
 * (telling them which check failed helps only an attacker).
 */
export class AuthFailure extends Error {
  readonly status: 401 | 403;
  readonly reason: string;
  /** 403: the scopes the request needed. */
  readonly missing: readonly string[];

  constructor(status: 401 | 403, reason: string, missing: readonly string[] = []) {
    super(reason);
    this.status = status;
    this.reason = reason;
    this.missing = missing;
  }
}
