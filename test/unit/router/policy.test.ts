import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../../src/config/types.ts';
import { PASS_ALL } from '../../../src/router/glob.ts';
import { compilePolicy, restrict } from '../../../src/router/policy.ts';

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
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
});
