/**
 * consent-waiters.ts: a completed consent reaches exactly the sessions of that principal that
 * were handed its elicitation id, once; a session that ended is not told; the registry is bounded.
 */
import { describe, expect, it } from 'vitest';
import { createConsentWaiters, type ConsentWaiter } from '../../../src/session/consent-waiters.ts';
import { declaresUrlElicitation, elicitationsOf } from '../../../src/session/url-consent.ts';
import { consentAsInput } from '../../../src/session/stateless/url-consent.ts';

const waiter = () => {
  const told: string[] = [];
  const w: ConsentWaiter = { complete: (target, id) => void told.push(`${target}:${id}`) };
  return { w, told };
};

describe('consent waiters', () => {
  it("tells only the principal's waiting sessions, once; never another principal's, never one that left", () => {
    const waiters = createConsentWaiters();
    const [a1, a2, gone, b] = [waiter(), waiter(), waiter(), waiter()];
    waiters.wait('alice', 'e1', a1.w);
    waiters.wait('alice', 'e1', a2.w);
    waiters.wait('alice', 'e1', gone.w);
    waiters.wait('bob', 'e1', b.w);
    waiters.leave(gone.w);
    waiters.connected('alice', 'docs', 'e1');
    waiters.connected('alice', 'docs', 'e1');
    expect([a1.told, a2.told, gone.told, b.told]).toEqual([['docs:e1'], ['docs:e1'], [], []]);
    // Another id of the same principal is not this consent.
    waiters.connected('bob', 'docs', 'other');
    expect(b.told).toEqual([]);
  });

  it('is bounded per principal: the oldest pending consent goes first', () => {
    const waiters = createConsentWaiters();
    const w = waiter();
    for (let i = 0; i < 100; i++) waiters.wait('alice', `e${i}`, w.w);
    waiters.connected('alice', 'docs', 'e0');
    waiters.connected('alice', 'docs', 'e99');
    expect(w.told).toEqual(['docs:e99']);
  });
});

describe('url consent shapes', () => {
  const error = { jsonrpc: '2.0', id: 3, error: { code: -32042, message: 'x', data: { code: 'GW_UPSTREAM_AUTH_REQUIRED', elicitations: [{ mode: 'url', elicitationId: 'e1', url: 'https://as.example/auth', message: 'Connect' }] } } };

  it('reads URL elicitations only from the gateway consent error', () => {
    expect(elicitationsOf(error.error.data)).toHaveLength(1);
    expect(elicitationsOf({ ...error.error.data, code: 'GW_UPSTREAM_HTTP_ERROR' })).toEqual([]);
    expect(elicitationsOf({ code: 'GW_UPSTREAM_AUTH_REQUIRED', elicitations: [{ mode: 'form', elicitationId: 'e', url: 'u', message: 'm' }, 'junk'] })).toEqual([]);
  });

  it('declares URL elicitation only with elicitation.url (an empty elicitation is form only)', () => {
    expect(declaresUrlElicitation({ capabilities: { elicitation: { url: {} } } })).toBe(true);
    expect(declaresUrlElicitation({ capabilities: { elicitation: {} } })).toBe(false);
    expect(declaresUrlElicitation({ capabilities: { elicitation: { form: {} } } })).toBe(false);
    expect(declaresUrlElicitation(undefined)).toBe(false);
  });

  it('turns the consent error into an input_required round (2026 URL mode has no elicitationId); any other answer is unchanged', () => {
    expect(consentAsInput(error)).toEqual({ jsonrpc: '2.0', id: 3, result: { resultType: 'input_required', inputRequests: { 'elicitation-e1': { method: 'elicitation/create', params: { mode: 'url', url: 'https://as.example/auth', message: 'Connect' } } } } });
    const other = { jsonrpc: '2.0', id: 3, result: { content: [] } };
    expect(consentAsInput(other)).toBe(other);
  });
});
