/**
 * One 2025 session's side of the per-user upstream consent (docs/upstreams.md, "Each user's own
 * account"; MCP 2025-11-25 client/elicitation, URL mode).
 *
 * The spec offers two flows for one consent, alternatives: a request that cannot be processed
 * until the user completes it is answered with URLElicitationRequiredError (-32042) and retried
 * afterwards; or the server sends `elicitation/create` (mode "url") and goes on. The gateway cannot
 * hold a call while a user visits a browser (the call is answered when its upstream cannot be
 * opened), so a request that needs the account gets the error only, never a second prompt for the
 * same consent. `elicitation/create` is sent where no request fails to carry it: an aggregate list
 * that left the server out (once per consent and session), and only to a client that declared
 * `elicitation.url` (servers MUST NOT send a mode the client did not declare).
 *
 * Either way the session waits for that `elicitationId` (consent-waiters.ts); when the callback
 * succeeds it gets `notifications/elicitation/complete`, and an aggregate list_changed.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import type { ConsentWaiter, ConsentWaiters } from './consent-waiters.ts';
import type { ServerMessages } from './server-messages.ts';

export interface SessionConsentOptions {
  readonly waiters: ConsentWaiters;
  /** The principal's id as the vault knows it (UserOAuth: 'anonymous' without one). */
  readonly principal: string;
  readonly messages: ServerMessages;
  /** Several targets behind the endpoint: their lists left the server out until now. */
  readonly namespaced: boolean;
  /** The client's initialize declared `capabilities.elicitation.url`. */
  declaresUrl(): boolean;
}

export interface SessionConsent {
  /** A message going to the client: an answer that asks for consent makes the session wait for it. */
  seen(message: JsonObject): void;
  /** A member left out of a list for want of the caller's account (its failure, if any). */
  leftOut(failure: { readonly code: string; readonly details: Readonly<Record<string, unknown>> } | undefined): void;
  end(): void;
}

interface UrlElicitation {
  readonly elicitationId: string;
  readonly url: string;
  readonly message: string;
}

/** The URL elicitations a GW_UPSTREAM_AUTH_REQUIRED error carries (user-oauth.ts `consentError`). */
export function elicitationsOf(data: unknown): UrlElicitation[] {
  if (!isObject(data) || data.code !== 'GW_UPSTREAM_AUTH_REQUIRED' || !Array.isArray(data.elicitations)) return [];
  return data.elicitations.filter(
    (e): e is JsonObject & UrlElicitation => isObject(e) && e.mode === 'url' && typeof e.elicitationId === 'string' && typeof e.url === 'string' && typeof e.message === 'string',
  );
}

export function createSessionConsent(options: SessionConsentOptions): SessionConsent {
  const { waiters, principal, messages } = options;
  /** Consents this session was asked about with elicitation/create (not again for each list). */
  const asked = new Set<string>();
  const waiter: ConsentWaiter = {
    complete(_target, elicitationId) {
      asked.delete(elicitationId);
      messages.notify('notifications/elicitation/complete', { elicitationId });
      if (options.namespaced) messages.listChanged('tools', 'prompts', 'resources');
    },
  };
  return {
    seen(message) {
      if (!('id' in message) || !isObject(message.error)) return;
      for (const e of elicitationsOf(message.error.data)) waiters.wait(principal, e.elicitationId, waiter);
    },
    leftOut(failure) {
      if (failure?.code !== 'GW_UPSTREAM_AUTH_REQUIRED' || !options.declaresUrl()) return;
      for (const e of elicitationsOf({ ...failure.details, code: failure.code })) {
        if (asked.has(e.elicitationId) || asked.size >= 64) continue;
        asked.add(e.elicitationId);
        waiters.wait(principal, e.elicitationId, waiter);
        messages.ask('elicitation/create', { mode: 'url', elicitationId: e.elicitationId, url: e.url, message: e.message });
      }
    },
    end() {
      waiters.leave(waiter);
    },
  };
}

/** Whether initialize params declare URL-mode elicitation. */
export function declaresUrlElicitation(params: unknown): boolean {
  const caps = isObject(params) ? params.capabilities : undefined;
  const elicitation = isObject(caps) ? caps.elicitation : undefined;
  return isObject(elicitation) && isObject(elicitation.url);
}
