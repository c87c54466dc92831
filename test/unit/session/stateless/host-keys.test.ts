import { describe, expect, it } from 'vitest';
import type { RouteEndpoint } from '../../../../src/session/endpoint-table.ts';
import { askingCapabilities, createHostKeys, type HostCaller } from '../../../../src/session/stateless/host-keys.ts';

describe('askingCapabilities: what keys a held session', () => {
  it('is the spec-defined abilities only, never the contents of the objects', () => {
    expect(askingCapabilities({})).toBe('---');
    expect(askingCapabilities({ sampling: { variant: 1 } })).toBe(askingCapabilities({ sampling: { other: 'x'.repeat(1_000) } }));
    expect(askingCapabilities({ sampling: {}, experimental: { a: {} } })).toBe('s--');
    expect(askingCapabilities({ sampling: { tools: {} } })).toBe('st--');
    expect(askingCapabilities({ sampling: { tools: {}, context: {} } })).toBe('stc--');
  });

  it('tells form from url elicitation (an empty object is form) and roots with list changes', () => {
    expect(askingCapabilities({ elicitation: {} })).toBe(askingCapabilities({ elicitation: { form: {} } }));
    expect(askingCapabilities({ elicitation: { url: {} } })).toBe('-eu-');
    expect(askingCapabilities({ elicitation: { form: {}, url: {} } })).toBe('-efu-');
    expect(askingCapabilities({ roots: {} })).toBe('--r');
    expect(askingCapabilities({ roots: { listChanged: true } })).toBe('--rl');
    expect(askingCapabilities({ roots: { listChanged: false } })).toBe('--r');
  });
});

describe('identityOf: the memo of a caller\'s scope and key', () => {
  const endpointOf = (forwardsCredential: boolean, grant = 'g1'): RouteEndpoint =>
    ({ endpoint: 'target:echo', open: true, factory: () => undefined, owns: () => true, grantKey: () => grant, forwardsCredential, needsCredential: forwardsCredential }) as unknown as RouteEndpoint;
  const callerOf = (endpoint: RouteEndpoint, principal: { id: string } | undefined, authorization: string | undefined, asking = '---'): HostCaller =>
    ({ endpoint, principal, authorization, capabilities: {}, asking, clientInfo: undefined }) as unknown as HostCaller;

  it('is what scopeOf and keyOf make, the same strings again, and apart wherever they differ', () => {
    const keys = createHostKeys();
    const plain = endpointOf(false);
    const alice = { id: 'alice' };
    const a = keys.identityOf(callerOf(plain, alice, 'Bearer one'));
    expect(a.scope).toBe(keys.scopeOf(callerOf(plain, alice, 'Bearer one')));
    expect(a.key).toBe(keys.keyOf(callerOf(plain, alice, 'Bearer one'), a.scope));
    // A principal's token does not key a host whose target never sees it.
    expect(keys.identityOf(callerOf(plain, alice, 'Bearer two'))).toBe(a);
    expect(keys.identityOf(callerOf(plain, { id: 'alice' }, 'Bearer one')).key).toBe(a.key);
    expect(keys.identityOf(callerOf(plain, { id: 'bob' }, 'Bearer one')).scope).not.toBe(a.scope);
    expect(keys.identityOf(callerOf(plain, alice, 'Bearer one', 's--')).key).not.toBe(a.key);
    // Without a principal the credential is the identity; with a forwarding target it always counts.
    const anonymous = [undefined, 'Bearer one', 'Bearer two', ''].map((auth) => keys.identityOf(callerOf(plain, undefined, auth)).scope);
    expect(new Set(anonymous).size).toBe(4);
    const forwarding = endpointOf(true);
    expect(keys.identityOf(callerOf(forwarding, alice, 'Bearer one')).scope).not.toBe(keys.identityOf(callerOf(forwarding, alice, 'Bearer two')).scope);
    // A reload's new endpoint object with another grant: another key.
    expect(keys.identityOf(callerOf(endpointOf(false, 'g2'), alice, 'Bearer one')).key).not.toBe(a.key);
  });

  it("counts a principal's hosts together whatever token it forwards; without a principal the credential is the owner", () => {
    const keys = createHostKeys();
    const forwarding = endpointOf(true);
    const alice = { id: 'alice' };
    const one = keys.identityOf(callerOf(forwarding, alice, 'Bearer one'));
    const two = keys.identityOf(callerOf(forwarding, { id: 'alice' }, 'Bearer two'));
    expect(two.scope).not.toBe(one.scope);
    expect(two.owner).toBe(one.owner);
    expect(keys.identityOf(callerOf(forwarding, { id: 'bob' }, 'Bearer one')).owner).not.toBe(one.owner);
    const anonymous = keys.identityOf(callerOf(forwarding, undefined, 'Bearer one'));
    expect(anonymous.owner).toBe(anonymous.scope);
    expect(keys.identityOf(callerOf(forwarding, undefined, 'Bearer two')).owner).not.toBe(anonymous.owner);
  });

  it('remembers a bounded number of credentials, and stays right past the bound', () => {
    const keys = createHostKeys();
    const plain = endpointOf(false);
    const first = keys.identityOf(callerOf(plain, undefined, 'Bearer 0'));
    for (let i = 1; i < 600; i++) keys.identityOf(callerOf(plain, undefined, `Bearer ${i}`));
    const again = keys.identityOf(callerOf(plain, undefined, 'Bearer 0'));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
