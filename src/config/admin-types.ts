/**
 * `gateway.admin` as the normalised config holds it (types.ts re-exports it): the operator's pages
 * and the console, and their defaults for a config built in code.
 */
/** The operator's pages (`gateway.admin`): see docs/configuration.md. */
export interface AdminConfig {
  readonly metrics: boolean;
  readonly status: boolean;
  /** With gateway.auth: the scope a credential needs for these pages. */
  readonly scope: string;
  /** Without gateway.auth: served beyond a loopback listener too. */
  readonly exposeWithoutAuth: boolean;
  readonly maxLabelValues: number;
  readonly recentErrors: number;
  readonly maxStatusStreams: number;
  /** The operator's console (http/console-routes.ts); undefined: not served. */
  readonly console?: ConsoleConfig | undefined;
}

/** `gateway.admin.console`: docs/operations.md, "The console". */
export interface ConsoleConfig {
  readonly enabled: boolean;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  readonly issuer?: string | undefined;
  readonly operatorClaim?: { readonly name: string; readonly values: readonly string[] } | undefined;
  readonly sessionTtlSec: number;
}

/** What `gateway.admin: {}` means (and a config built in code without it). */
export const ADMIN_DEFAULTS: AdminConfig = Object.freeze({
  metrics: true,
  status: true,
  scope: 'switchboard:admin',
  exposeWithoutAuth: false,
  maxLabelValues: 64,
  recentErrors: 50,
  maxStatusStreams: 8,
});
