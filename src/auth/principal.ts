
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
