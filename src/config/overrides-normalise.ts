/**
 * Overrides and virtual servers from the file's shape to the normalised config: a virtual server
 * becomes, per picked target (in pick order), that target's exposure narrowed to its picks, with
 * the picks' renames as its overrides (router/overrides.ts applies them like any other).
 */
import { pickedName, type OverridesEntry, type VirtualServerEntry } from './overrides-schema.ts';
import type { ItemOverride, OverridesConfig, TargetExposureConfig } from './types.ts';

/** Undefined for no `overrides` key. */
export function toOverridesConfig(entry: OverridesEntry | undefined): OverridesConfig | undefined {
  if (entry === undefined) return undefined;
  return { tools: entry.tools, prompts: entry.prompts, serverName: entry.serverInfo?.name, instructions: entry.instructions };
}

interface Picking {
  readonly tools: string[];
  readonly prompts: string[];
  readonly resources: string[];
  readonly toolOverrides: Record<string, ItemOverride>;
  readonly promptOverrides: Record<string, ItemOverride>;
}

/** Only what is set: an unset field passes the server's value through. */
function defined(item: ItemOverride): ItemOverride {
  return Object.fromEntries(Object.entries(item).filter(([, v]) => v !== undefined)) as ItemOverride;
}

/**
 * The target's own override name of a picked item that the pick renames again (`as`): the item
 * still carries it, so a policy or filter written with it holds on the virtual server too
 * (router/overrides.ts passesEvery).
 */
function alsoNamed(base: ItemOverride, as: string | undefined): readonly string[] | undefined {
  return as !== undefined && base.name !== undefined && base.name !== as ? [base.name] : undefined;
}

/**
 * Per virtual server, per picked target: the target's own exposure (its filters still apply), no
 * prefix, only the picked names, and overrides made of the picks (over the target's overrides of
 * the same items; its overrides of items not picked do not apply there).
 */
export function toVirtuals(
  virtuals: Readonly<Record<string, VirtualServerEntry>>,
  servers: Readonly<Record<string, { overrides?: OverridesEntry | undefined }>>,
  exposure: ReadonlyMap<string, TargetExposureConfig>,
): Map<string, Map<string, TargetExposureConfig>> {
  const out = new Map<string, Map<string, TargetExposureConfig>>();
  for (const [name, virtual] of Object.entries(virtuals)) {
    const picking = new Map<string, Picking>();
    const of = (server: string) => {
      let p = picking.get(server);
      if (p === undefined) picking.set(server, (p = { tools: [], prompts: [], resources: [], toolOverrides: {}, promptOverrides: {} }));
      return p;
    };
    // A disabled server's picks are left out (the virtual server still exists, with the others).
    for (const pick of virtual.tools) {
      if (!exposure.has(pick.server)) continue;
      const own = servers[pick.server]?.overrides;
      const p = of(pick.server);
      p.tools.push(pick.tool);
      const base = own?.tools[pick.tool] ?? {};
      const annotations = base.annotations === undefined && pick.annotations === undefined ? undefined : { ...base.annotations, ...pick.annotations };
      p.toolOverrides[pick.tool] = defined({
        ...defined(base),
        ...defined({ title: pick.title, description: pick.description, annotations }),
        name: pickedName(own, 'tools', pick.tool, pick.as),
        also: alsoNamed(base, pick.as),
      });
    }
    for (const pick of virtual.prompts) {
      if (!exposure.has(pick.server)) continue;
      const own = servers[pick.server]?.overrides;
      const p = of(pick.server);
      p.prompts.push(pick.prompt);
      const base = own?.prompts[pick.prompt] ?? {};
      p.promptOverrides[pick.prompt] = defined({
        ...defined(base),
        ...defined({ title: pick.title, description: pick.description }),
        name: pickedName(own, 'prompts', pick.prompt, pick.as),
        also: alsoNamed(base, pick.as),
      });
    }
    for (const pick of virtual.resources) if (exposure.has(pick.server)) of(pick.server).resources.push(pick.uri);
    const targets = new Map<string, TargetExposureConfig>();
    for (const [server, p] of picking) {
      const settings = exposure.get(server) as TargetExposureConfig;
      const instructions = settings.overrides?.instructions;
      targets.set(server, {
        ...settings,
        prefix: '',
        overrides: { tools: p.toolOverrides, prompts: p.promptOverrides, serverName: undefined, instructions },
        picks: { tools: p.tools, prompts: p.prompts, resources: p.resources },
      });
    }
    out.set(name, targets);
  }
  return out;
}
