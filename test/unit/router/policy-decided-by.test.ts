/**
 * `decidedBy` names the rule behind a decision for people (the console's access view); `grant`
 * makes the decision. They must never disagree: for every caller, target, kind and name of a
 * policy with allow, deny, scope and claim rules, an "allow" rule is named exactly when `grant`
 * lets the name through.
 */
import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../../src/config/types.ts';
import { compilePolicy, type PolicySubject } from '../../../src/router/policy.ts';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: [], prompts: [], resources: [], ...r });

const rules: PolicyRule[] = [
  rule({ principals: ['key:a*'], servers: ['git*'], tools: ['*'], prompts: ['p*'] }),
  rule({ effect: 'deny', principals: ['key:ab'], servers: ['github'], tools: ['delete_*'] }),
  rule({ scopes: ['admin'], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'] }),
  rule({ effect: 'deny', claims: { groups: ['contractors'] }, servers: ['files'], tools: ['*'], prompts: ['*'], resources: ['*'] }),
  rule({ principals: ['key:b'], servers: ['files'], resources: ['file:///pub/*'] }),
];
const callers: Array<PolicySubject | undefined> = [
  undefined,
  { id: 'key:a', scopes: new Set() },
  { id: 'key:ab', scopes: new Set() },
  { id: 'key:b', scopes: new Set() },
  { id: 'iss#x', scopes: new Set(['admin']) },
  { id: 'iss#y', scopes: new Set(['admin']), claims: { groups: ['contractors'] } },
];
const names = { tools: ['read', 'delete_repo', 'x'], prompts: ['plan', 'q'], resources: ['file:///pub/a', 'file:///etc/passwd'] };

describe('policy.decidedBy', () => {
  it('names an allow rule exactly when grant lets the name through, for every case', () => {
    const policy = compilePolicy(rules)!;
    let cases = 0;
    for (const caller of callers) {
      for (const target of ['github', 'gitlab', 'files', 'other']) {
        const grant = policy.grant(caller, target);
        for (const kind of ['tools', 'prompts', 'resources'] as const) {
          for (const name of names[kind]) {
            const allowed = grant !== undefined && grant[kind](name);
            const decided = policy.decidedBy(caller, target, kind, name);
            expect(decided?.effect === 'allow', `${caller?.id} ${target} ${kind} ${name}`).toBe(allowed);
            cases++;
          }
        }
      }
    }
    expect(cases).toBe(6 * 4 * 7);
  });

  it('names the deny rule that takes a name away, and the first allow rule that grants one', () => {
    const policy = compilePolicy(rules)!;
    expect(policy.decidedBy({ id: 'key:ab', scopes: new Set() }, 'github', 'tools', 'delete_repo')).toEqual({ index: 1, effect: 'deny' });
    expect(policy.decidedBy({ id: 'key:ab', scopes: new Set() }, 'github', 'tools', 'read')).toEqual({ index: 0, effect: 'allow' });
    expect(policy.decidedBy({ id: 'iss#y', scopes: new Set(['admin']), claims: { groups: ['contractors'] } }, 'files', 'tools', 'read')).toEqual({ index: 3, effect: 'deny' });
    expect(policy.decidedBy(undefined, 'github', 'tools', 'read')).toBeUndefined();
  });
});
