/**
 * "What can this principal reach": for each endpoint (every `/servers/<name>`, the root `/mcp`,
 * each group and virtual server), the tools, prompts and resources of each target behind it that
 * `caller` may list and call, with what decided each. Nothing here judges by itself: the policy is
 * the endpoint table's own (`grant`, and `decidedBy` to name the rule), the filters are
 * `exposureOf` / `toAggregateView` / `toVirtualView` narrowed by `restrict` / `restrictView` as the
 * sessions do, and each name is put to `hiddenNamed`, the check every request passes. Lists and
 * calls go through the same filter, so what may be listed is what may be called.
 *
 * Names come from what each server last listed to a client (observe/status.ts): the gateway does not
 * start a server to ask.
 */
import { aggregateOf, type GatewayConfig } from '../config/types.ts';
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import { hiddenNamed } from '../router/exposure.ts';
import type { Exposure } from '../router/list-merge.ts';
import { clientName } from '../router/overrides.ts';
import { restrict, type Kind, type Policy, type PolicySubject } from '../router/policy.ts';
import { exposureOf, restrictView, toAggregateView, toVirtualView, type AggregateView } from './aggregate-view.ts';

export interface ReachItem {
  readonly kind: Kind;
  /** The server's own name (a resource's URI). */
  readonly name: string;
  /** As a client sees it on this endpoint (prefix, override). */
  readonly shownAs: string;
  readonly allowed: boolean;
  /** What decided: `policy.rules[2] (allow)`, `no policy rule grants it`, `filters of <target>`, `no policy`. */
  readonly decidedBy: string;
}

export interface ReachTarget {
  readonly target: string;
  /** False: the whole target is out of reach here (`decidedBy` says why). */
  readonly reachable: boolean;
  readonly decidedBy: string;
  readonly items: readonly ReachItem[];
}

export interface ReachEndpoint {
  readonly path: string;
  readonly targets: readonly ReachTarget[];
}

export type KnownNames = (target: string) => { readonly tools: readonly string[]; readonly prompts: readonly string[]; readonly resources: readonly string[] };

const METHOD: Readonly<Record<Kind, string>> = { tools: 'tools/call', prompts: 'prompts/get', resources: 'resources/read' };

function passes(kind: Kind, shownAs: string, exposure: Exposure): boolean {
  const params = kind === 'resources' ? { uri: shownAs } : { name: shownAs };
  const request: JsonRpcRequest = { jsonrpc: '2.0', id: 0, method: METHOD[kind], params };
  return hiddenNamed(request, exposure) === undefined;
}

function ruleText(policy: Policy | undefined, caller: PolicySubject | undefined, target: string, kind: Kind, name: string): string {
  if (policy === undefined) return 'no policy';
  const rule = policy.decidedBy(caller, target, kind, name);
  return rule === undefined ? 'no policy rule grants it' : `policy.rules[${rule.index}] (${rule.effect})`;
}

function targetReach(target: string, base: Exposure, policy: Policy | undefined, caller: PolicySubject | undefined, names: KnownNames, separator: string | undefined): ReachTarget {
  const grant = policy?.grant(caller, target);
  if (policy !== undefined && grant === undefined) return { target, reachable: false, decidedBy: ruleText(policy, caller, target, 'tools', '*'), items: [] };
  const exposure = grant === undefined ? base : restrict(base, grant);
  const known = names(target);
  const items: ReachItem[] = [];
  for (const kind of ['tools', 'prompts', 'resources'] as const) {
    for (const name of known[kind]) {
      const own = kind === 'resources' ? name : (clientName(exposure.overrides, kind, name) ?? name);
      // On an aggregate the prefix goes in front of tool and prompt names; the filters see the name without it.
      const shownAs = separator !== undefined && kind !== 'resources' && base.prefix !== '' ? `${base.prefix}${separator}${own}` : own;
      const inFilters = passes(kind, own, base);
      const allowed = inFilters && passes(kind, own, exposure);
      items.push({ kind, name, shownAs, allowed, decidedBy: inFilters ? ruleText(policy, caller, target, kind, name) : `filters of ${target}` });
    }
  }
  return { target, reachable: true, decidedBy: policy === undefined ? 'no policy' : 'granted', items };
}

function viewReach(path: string, view: AggregateView, policy: Policy | undefined, caller: PolicySubject | undefined, names: KnownNames): ReachEndpoint {
  const granted = policy === undefined ? view : restrictView(view, policy, caller);
  const targets = [...view.targets].map(([name, t]) =>
    granted.targets.has(name) ? targetReach(name, t.exposure, policy, caller, names, view.separator) : { target: name, reachable: false, decidedBy: ruleText(policy, caller, name, 'tools', '*'), items: [] },
  );
  return { path, targets };
}

/** Every endpoint of `config` as `caller` reaches it under `policy` (the endpoint table's). */
export function reachOf(config: GatewayConfig, policy: Policy | undefined, caller: PolicySubject | undefined, names: KnownNames): ReachEndpoint[] {
  const out: ReachEndpoint[] = [];
  for (const name of config.targets.keys()) out.push({ path: `/servers/${name}/mcp`, targets: [targetReach(name, exposureOf(config, name), policy, caller, names, undefined)] });
  if (config.targets.size > 1) out.push(viewReach('/mcp', toAggregateView(config), policy, caller, names));
  for (const [group, members] of aggregateOf(config).groups) out.push(viewReach(`/groups/${group}/mcp`, toAggregateView(config, members), policy, caller, names));
  for (const virtual of aggregateOf(config).virtuals?.keys() ?? []) {
    const view = toVirtualView(config, virtual);
    if (view !== undefined) out.push(viewReach(`/virtual/${virtual}/mcp`, view, policy, caller, names));
  }
  return out;
}
