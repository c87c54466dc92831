/**
 * The values the gateway itself gives an upstream that are, or may be, secret: what log/scrub.ts
 * keeps out of the log when the upstream echoes them. Per target, from its config (computed once
 * per config object): every `env` value of a stdio target, every configured header value of a
 * remote one (and the credentials part of an `Authorization`-style `<scheme> <credentials>`
 * value), the token exchange's client secret. Per connection, read when a line is written: the
 * downstream's forwarded Authorization (`forwardAuthorization`), the exchanged token in use and
 * the user's own token (`oauth.perUser`).
 * Per-principal template values (`principalHeaders`, `principalEnv`) name who calls; they are not
 * secrets and stay readable.
 */
import type { TargetConfig } from '../config/types.ts';
import type { Caller } from './caller.ts';
import type { TokenCache } from './token-cache.ts';
import type { UserOAuth } from './oauth/user-oauth.ts';

const byTarget = new WeakMap<TargetConfig, readonly string[]>();

/** A credential value and, for `<scheme> <credentials>`, the credentials alone (an upstream may quote just the token). */
function withCredentialPart(value: string, out: string[]): void {
  out.push(value);
  const part = /^[A-Za-z][\w.+-]*\s+(\S+)\s*$/.exec(value)?.[1];
  if (part !== undefined) out.push(part);
}

/** The secrets `target`'s config gives its upstream, longest first (a value containing another goes first). */
export function targetSecrets(target: TargetConfig): readonly string[] {
  let known = byTarget.get(target);
  if (known !== undefined) return known;
  const out: string[] = [];
  if (target.type === 'stdio') out.push(...Object.values(target.env));
  else {
    for (const value of Object.values(target.headers)) withCredentialPart(value, out);
    if (target.tokenExchange?.clientSecret !== undefined) out.push(target.tokenExchange.clientSecret);
    if (target.oauth?.clientSecret !== undefined) out.push(target.oauth.clientSecret);
  }
  known = Object.freeze([...new Set(out)].sort((a, b) => b.length - a.length));
  byTarget.set(target, known);
  return known;
}

export interface ConnectionSecretsOptions {
  readonly target: TargetConfig;
  readonly caller?: Caller | undefined;
  readonly tokens?: TokenCache | undefined;
  readonly userOAuth?: UserOAuth | undefined;
}

/** What one upstream connection's log lines are scrubbed of: its target's secrets, and its live credentials. */
export function connectionSecrets(options: ConnectionSecretsOptions): () => readonly string[] {
  const { target } = options;
  const fixed = targetSecrets(target);
  if (target.type === 'stdio' || (!target.forwardAuthorization && target.tokenExchange === undefined && target.oauth === undefined)) return () => fixed;
  return () => {
    const live = [...fixed];
    const forwarded = target.forwardAuthorization ? options.caller?.authorization : undefined;
    if (forwarded !== undefined) withCredentialPart(forwarded, live);
    const exchanged = target.tokenExchange !== undefined ? options.tokens?.peek(target, options.caller?.principal) : undefined;
    if (exchanged !== undefined) live.push(exchanged);
    const own = target.oauth !== undefined ? options.userOAuth?.peek(target, options.caller?.principal) : undefined;
    if (own !== undefined) live.push(own);
    return live.sort((a, b) => b.length - a.length);
  };
}
