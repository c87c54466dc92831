/**
 * Who may call what, after normalisation: client authentication (API keys, JWT), step-up scopes,
 * rate limits and policy rules. Split from types.ts, which re-exports everything here.
 */

/** One API key: its principal name, the SHA-256 of the key (lowercase hex) and the scopes it grants. */
export interface ApiKeyConfig {
  readonly name: string;
  readonly sha256: string;
  readonly scopes: readonly string[];
}

export interface JwtConfig {
  readonly issuers: readonly string[];
  readonly jwksUrl: string | undefined;
  /** Least time between two JWKS fetches (s). */
  readonly jwksRefetchSec: number;
  /** The JWKS response's max-age is clamped to [jwksMinCacheSec, jwksMaxCacheSec] (s). */
  readonly jwksMinCacheSec: number;
  readonly jwksMaxCacheSec: number;
  /** Static public keys (JWK objects), when no jwksUrl. */
  readonly keys: readonly Readonly<Record<string, unknown>>[] | undefined;
  readonly algorithms: readonly string[];
  readonly clockSkewSec: number;
  /** Accepted besides the resource URL the client called. */
  readonly audiences: readonly string[];
}

/** Client authentication (docs/security.md). */
export interface AuthConfig {
  readonly anonymous: boolean;
  /** The gateway's public origin; undefined: `http://<Host>` as called. */
  readonly publicUrl: string | undefined;
  readonly apiKeys: readonly ApiKeyConfig[];
  /** Lowercase header name; "authorization" means `Bearer <key>`. */
  readonly apiKeyHeader: string;
  readonly jwt: JwtConfig | undefined;
  /** Scopes every request needs. */
  readonly scopes: readonly string[];
  /** Named in the protected-resource metadata. */
  readonly authorizationServers: readonly string[];
  /** How a call lacking a requiredScopes scope is refused (absent: "http", a 403 challenge). */
  readonly stepUp?: 'http' | 'jsonrpc';
}

/** Glob (a server's own name, or a URI) -> the scopes a call naming a match needs. */
export type ScopeRules = Readonly<Record<string, readonly string[]>>;

/** `mcpServers.<name>.requiredScopes`: per kind, what a call, get or read needs beyond gateway.auth.scopes. */
export interface RequiredScopesConfig {
  readonly tools: ScopeRules;
  readonly prompts: ScopeRules;
  readonly resources: ScopeRules;
}

export interface BucketConfig {
  readonly perSecond: number;
  readonly burst: number;
}

export interface RateLimitsConfig {
  readonly perPrincipal: BucketConfig | undefined;
  readonly perTool: BucketConfig | undefined;
  readonly maxKeys: number;
}

/** One rule of `gateway.policy`; every list holds globs. */
export interface PolicyRule {
  readonly effect: 'allow' | 'deny';
  readonly principals: readonly string[];
  readonly scopes: readonly string[];
  /** Token claims the caller must carry: name -> globs, one of which a value must match. */
  readonly claims: Readonly<Record<string, readonly string[]>>;
  readonly servers: readonly string[];
  readonly tools: readonly string[];
  readonly prompts: readonly string[];
  readonly resources: readonly string[];
}
