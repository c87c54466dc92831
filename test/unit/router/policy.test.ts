import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../../src/config/types.ts';
import { PASS_ALL } from '../../../src/router/glob.ts';
import { claimNamesOf, compilePolicy, restrict } from '../../../src/router/policy.ts';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const caller = (id: string, ...scopes: string[]) => ({ id, scopes: new Set(scopes) });

describe('policy', () => {
  it('no policy: no decision at all', () => {
    expect(compilePolicy(undefined)).toBeUndefined();
  });

  it('denies by default: what no allow rule grants is unknown', () => {
    const policy = compilePolicy([rule({ principals: ['key:a'], servers: ['git*'] })])!;
    expect(policy.grant(caller('key:a'), 'github')).toBeDefined();
    expect(policy.grant(caller('key:a'), 'files')).toBeUndefined();
    expect(policy.grant(caller('key:b'), 'github')).toBeUndefined();
    expect(policy.grant(undefined, 'github')).toBeUndefined();
  });

  it('callerKey: equal for callers every rule treats alike, whatever the target; a scope or claim a rule names tells them apart', () => {
    const policy = compilePolicy([
      rule({ servers: ['github'] }),
      rule({ scopes: ['admin'] }),
      rule({ effect: 'deny', claims: { groups: ['contractors'] } }),
      rule({ principals: ['key:ci'] }),
    ])!;
    const narrow = policy.callerKey(caller('iss#alice', 'mcp'));
    expect(policy.callerKey(caller('iss#alice', 'mcp', 'other'))).toBe(narrow);
    expect(policy.callerKey(caller('iss#alice', 'mcp', 'admin'))).not.toBe(narrow);
    expect(policy.callerKey({ ...caller('iss#alice', 'mcp'), claims: { groups: ['contractors'] } })).not.toBe(narrow);
    expect(policy.callerKey(caller('key:ci'))).not.toBe(policy.callerKey(caller('key:cd')));
    expect(policy.callerKey(undefined)).toBe(policy.callerKey(caller('anonymous')));
  });

  it('applies a rule only to callers holding all its scopes', () => {
    const policy = compilePolicy([rule({ scopes: ['mcp', 'admin'] })])!;
    expect(policy.grant(caller('x', 'mcp'), 's')).toBeUndefined();
    expect(policy.grant(caller('x', 'mcp', 'admin'), 's')).toBeDefined();
  });

  it('deny wins over every allow, name by name; a deny naming no kind takes the whole server', () => {
    const policy = compilePolicy([
      rule({ tools: ['read_*', 'write_*'] }),
      rule({ tools: ['*'], principals: ['key:admin'] }),
      rule({ effect: 'deny', tools: ['write_*'], prompts: [], resources: [] }),
      rule({ effect: 'deny', servers: ['shell'] }),
    ])!;
    const grant = policy.grant(caller('key:admin'), 'files')!;
    expect([grant.tools('read_file'), grant.tools('write_file'), grant.tools('other')]).toEqual([true, false, true]);
    expect(grant.prompts('anything')).toBe(true);
    expect(policy.grant(caller('key:user'), 'files')!.tools('other')).toBe(false);
    expect(policy.grant(caller('key:admin'), 'shell')).toBeUndefined();
  });

  it("a grant of everything keeps the target's own filters as they are (the fast path stays)", () => {
    const policy = compilePolicy([rule({})])!;
    const grant = policy.grant(caller('x'), 's')!;
    expect([grant.tools, grant.prompts, grant.resources]).toEqual([PASS_ALL, PASS_ALL, PASS_ALL]);
    const exposure = { prefix: 's', tools: PASS_ALL, prompts: PASS_ALL, resources: PASS_ALL };
    expect(restrict(exposure, grant)).toBe(exposure);
    const narrowed = restrict({ ...exposure, tools: (n: string) => n !== 'hidden' }, compilePolicy([rule({ tools: ['a*', 'hidden'] })])!.grant(caller('x'), 's')!);
    expect([narrowed.tools('abc'), narrowed.tools('hidden'), narrowed.tools('zzz')]).toEqual([true, false, false]);
  });

  describe('claims', () => {
    const withClaims = (id: string, claims: Record<string, string[]> | undefined) => ({ id, scopes: new Set<string>(), claims });

    it('a rule naming a claim applies when a string or list claim has a value matching one of its globs', () => {
      const policy = compilePolicy([rule({ claims: { groups: ['admins', 'ops-*'] }, servers: ['shell'] }), rule({ servers: ['files'] })])!;
      expect(policy.grant(withClaims('a', { groups: ['users', 'admins'] }), 'shell')).toBeDefined();
      expect(policy.grant(withClaims('b', { groups: ['ops-eu'] }), 'shell')).toBeDefined();
      expect(policy.grant(withClaims('c', { groups: ['users'] }), 'shell')).toBeUndefined();
      expect(policy.grant(withClaims('d', { groups: [] }), 'shell')).toBeUndefined();
      // No token (an API key, anonymous): no claims, so the rule is not for it.
      expect(policy.grant(caller('key:x'), 'shell')).toBeUndefined();
      expect(policy.grant(withClaims('c', { groups: ['users'] }), 'files')).toBeDefined();
    });

    it('every claim a rule names must match (and its principals and scopes too)', () => {
      const policy = compilePolicy([rule({ principals: ['https://as#*'], claims: { groups: ['admins'], tenant: ['acme'] } })])!;
      expect(policy.grant(withClaims('https://as#al', { groups: ['admins'], tenant: ['acme'] }), 's')).toBeDefined();
      expect(policy.grant(withClaims('https://as#al', { groups: ['admins'], tenant: ['other'] }), 's')).toBeUndefined();
      expect(policy.grant(withClaims('key:al', { groups: ['admins'], tenant: ['acme'] }), 's')).toBeUndefined();
    });

    it('deny wins: a deny rule on a claim takes tools away from whoever carries it', () => {
      const policy = compilePolicy([rule({}), rule({ effect: 'deny', claims: { groups: ['contractors'] }, tools: ['write_*'], prompts: [], resources: [] })])!;
      expect(policy.grant(withClaims('a', { groups: ['contractors'] }), 's')!.tools('write_file')).toBe(false);
      expect(policy.grant(withClaims('a', { groups: ['contractors'] }), 's')!.tools('read_file')).toBe(true);
      expect(policy.grant(withClaims('b', { groups: ['staff'] }), 's')!.tools('write_file')).toBe(true);
    });

    it('a claim the principal did not capture fails closed: allow rules do not apply, deny rules do', () => {
      const policy = compilePolicy([rule({ claims: { role: ['*'] }, servers: ['a'] }), rule({ servers: ['b'] }), rule({ effect: 'deny', claims: { role: ['guest'] }, servers: ['b'] })])!;
      const uncaptured = withClaims('x', {});
      expect(policy.grant(uncaptured, 'a')).toBeUndefined();
      expect(policy.grant(uncaptured, 'b')).toBeUndefined();
      expect(policy.grant(withClaims('x', { role: ['staff'] }), 'b')).toBeDefined();
    });

    it('a claim cut to the bounds fails closed: a deny rule naming it applies, an allow rule sees only kept values', () => {
      const policy = compilePolicy([
        rule({ servers: ['s'] }),
        rule({ claims: { groups: ['admins'] }, servers: ['admin'] }),
        rule({ effect: 'deny', claims: { groups: ['contractors'] }, tools: ['write_*'], prompts: [], resources: [] }),
      ])!;
      const cut = { id: 'a', scopes: new Set<string>(), claims: { groups: ['staff'] }, claimsCut: new Set(['groups']) };
      expect(policy.grant(cut, 's')!.tools('write_file')).toBe(false);
      expect(policy.grant(cut, 's')!.tools('read_file')).toBe(true);
      // The same kept values, nothing cut: the deny rule does not apply.
      expect(policy.grant(withClaims('a', { groups: ['staff'] }), 's')!.tools('write_file')).toBe(true);
      // A cut claim grants nothing it did not keep, and a cut on another claim changes nothing.
      expect(policy.grant(cut, 'admin')).toBeUndefined();
      expect(policy.grant({ ...cut, claims: { groups: ['admins'] } }, 'admin')).toBeDefined();
      const otherCut = { ...cut, claimsCut: new Set(['role']) };
      expect(policy.grant(otherCut, 's')!.tools('write_file')).toBe(true);
    });

    it('lists the claim names the rules use', () => {
      expect(claimNamesOf([rule({ claims: { groups: ['a'] } }), rule({ claims: { groups: ['b'], 'https://x.example/roles': ['c'] } })])).toEqual(['groups', 'https://x.example/roles']);
      expect(claimNamesOf(undefined)).toEqual([]);
    });
  });
});
