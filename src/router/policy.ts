/**
 * `gateway.policy` as pure functions: which targets, tools, prompts and resources a caller may
 * reach. With a policy, what no allow rule grants is denied and a deny rule wins over every allow.
 * A rule applies to a caller whose id matches one of its `principals` globs, who holds all its
 * `scopes`, and each of whose `claims` named by the rule has a value matching one of the rule's
 * globs for it (a string claim, or any element of a list claim). A target is reachable when an allow rule names it and no deny rule takes all of it
 * away; then each name passes when an allow rule's globs match it and no deny rule's do.
 *
 * The result is a `Grant` of name filters, combined with the target's own filters (`restrict`),
 * so lists and calls go through the same check on every path and a denied name looks exactly like
 * an unknown one.
 */
import type { PolicyRule } from '../config/types.ts';
import { canonicalGlob, foldName } from './canonical.ts';
import { compileGlobs, PASS_ALL, type NameFilter } from './glob.ts';
import type { Exposure } from './list-merge.ts';
import { ANONYMOUS, type Principal } from '../upstream/caller.ts';

/** What the policy reads of a principal (upstream/caller.ts): its id, scopes and claims. */
export type PolicySubject = Pick<Principal, 'id' | 'scopes' | 'claims' | 'claimsCut'>;

export interface Grant {
  readonly tools: NameFilter;
  readonly prompts: NameFilter;
  readonly resources: NameFilter;
}

export interface Policy {
  /** Equal for equal rules: a reload that changes them changes what live sessions see. */
  readonly fingerprint: string;
  /** What `caller` may use of `target`; undefined: nothing (the target is as unknown). */
  grant(caller: PolicySubject | undefined, target: string): Grant | undefined;
  /**
   * Which rules are for `caller` (its id, scopes and claims; targets aside), one character per
   * rule: two callers with equal keys get equal grants on every target. Two tokens of one subject
   * with different scopes or claims may differ.
   */
  callerKey(caller: PolicySubject | undefined): string;
}

type Kind = 'tools' | 'prompts' | 'resources';
const KINDS: readonly Kind[] = ['tools', 'prompts', 'resources'];
const matchAll = (globs: readonly string[]) => globs.includes('*');

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly principals: RegExp;
  readonly servers: RegExp;
  readonly claims: readonly (readonly [string, RegExp])[];
  readonly names: Record<Kind, RegExp>;
}

/**
 * A rule's globs for one kind of name: resource globs in the canonical URI spelling
 * (router/canonical.ts) the chain's entrance gives every URI; a deny rule's tool and prompt globs
 * fold (foldName: NFKC) and every deny glob ignores case, so a look-alike of a denied name or
 * path (on a server that reads names or paths without regard to case) is denied too.
 */
function namesOf(rule: PolicyRule, kind: Kind): RegExp {
  const globs = kind === 'resources' ? rule.resources.map(canonicalGlob) : rule.effect === 'deny' ? rule[kind].map(foldName) : rule[kind];
  const re = compileGlobs(globs);
  if (re === undefined) return /(?!)/;
  return rule.effect === 'deny' ? new RegExp(re.source, 'si') : re;
}

function compileRule(rule: PolicyRule): CompiledRule {
  const re = (globs: readonly string[]) => compileGlobs(globs) ?? /(?!)/;
  return {
    rule,
    principals: re(rule.principals),
    servers: re(rule.servers),
    claims: Object.entries(rule.claims).map(([name, globs]) => [name, re(globs)] as const),
    names: { tools: namesOf(rule, 'tools'), prompts: namesOf(rule, 'prompts'), resources: namesOf(rule, 'resources') },
  };
}

function filterOf(kind: Kind, allows: CompiledRule[], denies: CompiledRule[]): NameFilter {
  const denied = denies.filter((r) => r.rule[kind].length > 0);
  if (denied.length === 0 && allows.some((r) => matchAll(r.rule[kind]))) return PASS_ALL;
  const fold = kind === 'resources' ? (name: string) => name : foldName;
  return (name) => allows.some((r) => r.names[kind].test(name)) && !denied.some((r) => r.names[kind].test(fold(name)));
}

/**
 * Whether `caller`'s claims satisfy the rule's. A caller without a token has no claims: a rule
 * that names claims is not for it. A claim the principal did not capture (the policy that named
 * it came with a reload, after the token was read) fails closed: an allow rule does not apply,
 * a deny rule does. So does a claim whose values were cut to the bounds (the cut value may be the
 * one the deny rule names); an allow rule matches only a value that was kept whole.
 */
function claimsMatch(r: CompiledRule, caller: PolicySubject): boolean {
  if (r.claims.length === 0) return true;
  const claims = caller.claims;
  if (claims === undefined) return false;
  const deny = r.rule.effect === 'deny';
  const cut = caller.claimsCut;
  return r.claims.every(([name, glob]) => {
    const values = claims[name];
    if (values === undefined || (deny && cut?.has(name) === true)) return deny;
    return values.some((v) => glob.test(v));
  });
}

/** Whether rule `r` is for `caller` (on the targets it names). */
const isFor = (r: CompiledRule, caller: PolicySubject) => r.principals.test(caller.id) && r.rule.scopes.every((s) => caller.scopes.has(s)) && claimsMatch(r, caller);

/** Every claim name the rules use: what the edge keeps of a token for the policy. */
export function claimNamesOf(rules: readonly PolicyRule[] | undefined): string[] {
  return [...new Set((rules ?? []).flatMap((r) => Object.keys(r.claims)))];
}

export function compilePolicy(rules: readonly PolicyRule[] | undefined): Policy | undefined {
  if (rules === undefined) return undefined;
  const compiled = rules.map(compileRule);
  return {
    fingerprint: JSON.stringify(rules),
    grant(caller = ANONYMOUS, target) {
      const applies = (r: CompiledRule) => r.servers.test(target) && isFor(r, caller);
      const allows = compiled.filter((r) => r.rule.effect === 'allow' && applies(r));
      const denies = compiled.filter((r) => r.rule.effect === 'deny' && applies(r));
      if (allows.length === 0) return undefined;
      // A deny rule over every name of every kind takes the whole target away.
      if (denies.some((r) => KINDS.every((k) => matchAll(r.rule[k])))) return undefined;
      return { tools: filterOf('tools', allows, denies), prompts: filterOf('prompts', allows, denies), resources: filterOf('resources', allows, denies) };
    },
    callerKey(caller = ANONYMOUS) {
      let key = '';
      for (const r of compiled) key += isFor(r, caller) ? '1' : '0';
      return key;
    },
  };
}

const both = (a: NameFilter, b: NameFilter): NameFilter => (a === PASS_ALL ? b : b === PASS_ALL ? a : (name) => a(name) && b(name));

/** The target's own filters narrowed by `grant` (unchanged, same object, when the grant is all-pass). */
export function restrict(exposure: Exposure, grant: Grant): Exposure {
  if (grant.tools === PASS_ALL && grant.prompts === PASS_ALL && grant.resources === PASS_ALL) return exposure;
  return {
    prefix: exposure.prefix,
    tools: both(exposure.tools, grant.tools),
    prompts: both(exposure.prompts, grant.prompts),
    resources: both(exposure.resources, grant.resources),
    overrides: exposure.overrides,
  };
}
