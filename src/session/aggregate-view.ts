/**
 * What an aggregate endpoint serves, computed once per config (and again on reload): its targets in
 * config order, each with compiled filters and a fingerprint that tells a reload whether the
 * target changed.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { JsonObject } from '../jsonrpc/types.ts';
import { aggregateOf, defaultExposure, type GatewayConfig, type TargetConfig, type TargetExposureConfig } from '../config/types.ts';
import { canonicalGlob } from '../router/canonical.ts';
import { createNameFilter, type NameFilter } from '../router/glob.ts';
import { compileOverrides } from '../router/overrides.ts';
import { restrict, type Policy, type PolicySubject } from '../router/policy.ts';
import type { Caller } from '../upstream/caller.ts';
import type { Exposure } from '../router/list-merge.ts';
import { hasPrincipalIdentity } from '../upstream/identity.ts';

export interface ViewTarget {
  readonly target: TargetConfig;
  readonly exposure: Exposure;
  readonly eager: boolean;
  /** Equal fingerprints: the same target with the same settings (a reload leaves it alone). */
  readonly fingerprint: string;
}

export interface AggregateView {
  readonly separator: string;
  readonly listTimeoutMs: number;
  readonly targets: ReadonlyMap<string, ViewTarget>;
}

/** What the gateway learnt of a target in a handshake. */
export interface Learnt {
  readonly capabilities: JsonObject;
  readonly instructions: string | undefined;
}

/**
 * What the gateway learnt of each target, keyed by the (frozen) target config, then by principal
 * id for a target whose answers may depend on the caller (upstream/identity.ts), and by credential
 * as well for one that is sent the caller's own (`forwardAuthorization`): one caller's instructions
 * never reach another's session. At most `KNOWN_PER_TARGET` callers per target, the oldest
 * forgotten first (its sessions then assume the defaults until the target answers).
 */
export type KnownTargets = WeakMap<TargetConfig, Map<string, Learnt>>;
export const KNOWN_PER_TARGET = 1_000;

/** Whose session learnt something: its principal, and a keyed hash of its credential (never the header). */
export interface Learner {
  readonly principal: string | undefined;
  readonly credential: string | undefined;
}

/** Keys the credential hashes for as long as the process lives; never stored or shown. */
const SECRET = randomBytes(32);

export function learnerOf(caller: Caller): Learner {
  const auth = caller.authorization;
  return { principal: caller.principal?.id, credential: auth === undefined ? undefined : createHmac('sha256', SECRET).update(auth).digest('base64url') };
}

const knownKey = (target: TargetConfig, who: Learner) => {
  if (!hasPrincipalIdentity(target)) return '';
  const principal = who.principal ?? 'anonymous';
  return target.type !== 'stdio' && target.forwardAuthorization ? `${principal}\u0000${who.credential ?? ''}` : principal;
};

export function learntOf(known: KnownTargets, target: TargetConfig, who: Learner): Learnt | undefined {
  return known.get(target)?.get(knownKey(target, who));
}

export function learn(known: KnownTargets, target: TargetConfig, who: Learner, learnt: Learnt): void {
  let byCaller = known.get(target);
  if (byCaller === undefined) known.set(target, (byCaller = new Map()));
  const key = knownKey(target, who);
  byCaller.delete(key);
  if (byCaller.size >= KNOWN_PER_TARGET) byCaller.delete(byCaller.keys().next().value as string);
  byCaller.set(key, learnt);
}

/** The view of `config` over `names` (a group's targets), or over every target when undefined. */
export function toAggregateView(config: GatewayConfig, names?: readonly string[]): AggregateView {
  const aggregate = aggregateOf(config);
  return viewOf(config, (name) => (names !== undefined && !names.includes(name) ? undefined : (aggregate.exposure.get(name) ?? defaultExposure(name))));
}

/**
 * The view of virtual server `name` (`/virtual/<name>/mcp`): its picked targets, each narrowed to
 * its picks with their renames; undefined when the config has no such virtual server.
 */
export function toVirtualView(config: GatewayConfig, name: string): AggregateView | undefined {
  const picked = aggregateOf(config).virtuals?.get(name);
  return picked === undefined ? undefined : viewOf(config, (target) => picked.get(target), [...picked.keys()]);
}

/** The view over the targets `settingsOf` gives settings for, in `order` (default: config order). */
function viewOf(config: GatewayConfig, settingsOf: (name: string) => TargetExposureConfig | undefined, order = [...config.targets.keys()]): AggregateView {
  const aggregate = aggregateOf(config);
  const targets = new Map<string, ViewTarget>();
  for (const name of order) {
    const target = config.targets.get(name);
    const settings = target === undefined ? undefined : settingsOf(name);
    if (target === undefined || settings === undefined) continue;
    targets.set(name, {
      target,
      exposure: compileExposure(settings),
      eager: settings.eager,
      fingerprint: JSON.stringify({ target, settings, separator: aggregate.separator }),
    });
  }
  return { separator: aggregate.separator, listTimeoutMs: aggregate.listTimeoutMs, targets };
}

/** Exactly the picked names, under the server's name and the name the pick gives (router/overrides.ts). */
function pickFilter(names: readonly string[], given: TargetExposureConfig['overrides'], kind: 'tools' | 'prompts'): NameFilter {
  const set = new Set(names);
  for (const name of names) {
    const to = given?.[kind][name]?.name;
    if (to !== undefined) set.add(to);
  }
  return (name) => set.has(name);
}

const NOTHING: NameFilter = () => false;
const both = (a: NameFilter, b: NameFilter): NameFilter => (name) => a(name) && b(name);

function compileExposure(settings: TargetExposureConfig): Exposure {
  const tools = createNameFilter(settings.tools.allow, settings.tools.deny);
  const prompts = createNameFilter(settings.prompts.allow, settings.prompts.deny);
  // URI globs in the canonical spelling every request's URI is judged in (router/canonical.ts).
  const resources = createNameFilter(settings.resources.allow.map(canonicalGlob), settings.resources.deny.map(canonicalGlob));
  const overrides = compileOverrides(settings.overrides);
  const picks = settings.picks;
  if (picks === undefined) return { prefix: settings.prefix, tools, prompts, resources, overrides };
  // A virtual server's target: its own filters, and only what was picked.
  return {
    prefix: settings.prefix,
    tools: both(tools, pickFilter(picks.tools, settings.overrides, 'tools')),
    prompts: both(prompts, pickFilter(picks.prompts, settings.overrides, 'prompts')),
    resources: picks.resources.length === 0 ? NOTHING : both(resources, createNameFilter(picks.resources.map(canonicalGlob))),
    overrides,
  };
}

/** A target's filters wherever it is served (its own path too); the prefix matters only in an aggregate. */
export function exposureOf(config: GatewayConfig, name: string): Exposure {
  return compileExposure(aggregateOf(config).exposure.get(name) ?? defaultExposure(name));
}

/** `view` as `policy` lets `caller` see it: denied targets left out, the others' filters narrowed. */
export function restrictView(view: AggregateView, policy: Policy, caller: PolicySubject | undefined): AggregateView {
  const targets = new Map<string, ViewTarget>();
  for (const [name, target] of view.targets) {
    const grant = policy.grant(caller, name);
    if (grant === undefined) continue;
    targets.set(name, { ...target, exposure: restrict(target.exposure, grant), fingerprint: `${target.fingerprint}|${policy.fingerprint}` });
  }
  return { ...view, targets };
}
