/**
 * The schema of overrides (`mcpServers.<n>.overrides`) and virtual servers
 * (`gateway.virtualServers.<name>`): how tools and prompts look to clients, and endpoints built
 * from chosen tools, prompts and resources of several servers (docs/governance.md, "Overrides and
 * virtual servers"). Strict like the rest of the config; every default with its reason.
 */
import { z } from 'zod';
import { anObject, boolean, nonEmptyString } from './schema-kit.ts';
import { discoverySchema } from './discovery-schema.ts';

/**
 * A name an override or a pick gives: the characters every model API accepts in a tool name
 * (`^[a-zA-Z0-9_-]{1,64}$`, router/naming.ts), so the name reaches clients as written.
 */
export const givenName = z.string({ error: 'expected a string' }).regex(/^[A-Za-z0-9_-]{1,64}$/, {
  error: 'expected 1-64 letters, digits, "_" or "-" (the characters every client accepts in a tool name)',
});

/** A name a server gives (what a pick or an override refers to): one name, never a glob. */
const serverItemName = nonEmptyString().regex(/^[^*?]+$/, { error: 'names one item: "*" and "?" are not allowed (use the filters for globs)' });

/** The MCP ToolAnnotations keys (2025-11-25 server/tools): each set one replaces the server's. */
const annotationsSchema = z.strictObject({
  title: z.string({ error: 'expected a string' }).optional(),
  readOnlyHint: boolean().optional(),
  destructiveHint: boolean().optional(),
  idempotentHint: boolean().optional(),
  openWorldHint: boolean().optional(),
}, anObject);

/** An unset field passes the server's value through. */
const itemOverride = {
  name: givenName.optional(),
  title: z.string({ error: 'expected a string' }).optional(),
  description: z.string({ error: 'expected a string' }).optional(),
};
export const toolOverrideSchema = z.strictObject({ ...itemOverride, annotations: annotationsSchema.optional() }, anObject);
export const promptOverrideSchema = z.strictObject(itemOverride, anObject);

export const overridesSchema = z.strictObject({
  /** {}: every tool as the server lists it. Keyed by the server's own tool name. */
  tools: z.record(serverItemName, toolOverrideSchema, { error: 'expected an object of tool overrides by the server\'s tool name' }).default({}),
  /** {}: every prompt as the server lists it. */
  prompts: z.record(serverItemName, promptOverrideSchema, { error: 'expected an object of prompt overrides by the server\'s prompt name' }).default({}),
  /** Unset: the server's own serverInfo name (on its own path). */
  serverInfo: z.strictObject({ name: nonEmptyString().optional() }, anObject).optional(),
  /** Unset: the server's own instructions. */
  instructions: z.string({ error: 'expected a string' }).optional(),
}, anObject);

const toolPick = z.strictObject({
  server: nonEmptyString(),
  tool: serverItemName,
  /** Unset: the name the server's overrides give it, else its own. */
  as: givenName.optional(),
  title: itemOverride.title,
  description: itemOverride.description,
  annotations: annotationsSchema.optional(),
}, anObject);

const promptPick = z.strictObject({
  server: nonEmptyString(),
  prompt: serverItemName,
  as: givenName.optional(),
  title: itemOverride.title,
  description: itemOverride.description,
}, anObject);

const resourcePick = z.strictObject({
  server: nonEmptyString(),
  /** A glob on the server's URIs and template URIs (`docs://guides/*`), as its filters take. */
  uri: nonEmptyString(),
}, anObject);

export const virtualServerSchema = z.strictObject({
  /** []: no tools. A virtual server offers only what it picks. */
  tools: z.array(toolPick, { error: 'expected a list of { server, tool, as? }' }).default([]),
  /** []: no prompts. */
  prompts: z.array(promptPick, { error: 'expected a list of { server, prompt, as? }' }).default([]),
  /** []: no resources. */
  resources: z.array(resourcePick, { error: 'expected a list of { server, uri }' }).default([]),
  /** Progressive discovery on the virtual server's endpoint; absent: off. */
  discovery: discoverySchema.optional(),
}, anObject);

export type OverridesEntry = z.output<typeof overridesSchema>;
export type VirtualServerEntry = z.output<typeof virtualServerSchema>;

/** What the cross-entry checks read of the document. */
interface OverridesDocument {
  mcpServers: Record<string, { disabled: boolean; overrides?: OverridesEntry | undefined }>;
  gateway: { virtualServers: Record<string, VirtualServerEntry> };
}

/** The client's name of a picked tool or prompt: its `as`, else its server's override, else its own. */
export function pickedName(overrides: OverridesEntry | undefined, kind: 'tools' | 'prompts', item: string, as: string | undefined): string {
  return as ?? overrides?.[kind][item]?.name ?? item;
}

/** Names an override gives must stay unique: among its renames, and against a name it leaves in place. */
function checkRenames(name: string, overrides: OverridesEntry, ctx: z.RefinementCtx): void {
  for (const kind of ['tools', 'prompts'] as const) {
    const given = new Map<string, string>();
    for (const [original, override] of Object.entries(overrides[kind])) {
      const to = override.name;
      if (to === undefined || to === original) continue;
      const other = given.get(to);
      const kept = Object.hasOwn(overrides[kind], to) && (overrides[kind][to]?.name ?? to) === to;
      if (other !== undefined || kept) {
        const why = other !== undefined ? `"${other}" is renamed to it too` : `"${to}" keeps that name`;
        ctx.addIssue({ code: 'custom', path: ['mcpServers', name, 'overrides', kind, original, 'name'], message: `"${to}" would name two ${kind}: ${why}` });
      } else given.set(to, original);
    }
  }
}

/** A virtual server's picks name servers that exist, and give each name once per kind. */
function checkVirtual(config: OverridesDocument, name: string, virtual: VirtualServerEntry, ctx: z.RefinementCtx): void {
  const at = (kind: string, i: number, key: string) => ['gateway', 'virtualServers', name, kind, i, key];
  for (const kind of ['tools', 'prompts', 'resources'] as const) {
    const seen = new Map<string, number>();
    virtual[kind].forEach((pick, i) => {
      const server = config.mcpServers[pick.server];
      if (server === undefined) {
        ctx.addIssue({ code: 'custom', path: at(kind, i, 'server'), message: `unknown server "${pick.server}"` });
        return;
      }
      if (kind === 'resources') return;
      const item = 'tool' in pick ? pick.tool : (pick as { prompt: string }).prompt;
      const client = pickedName(server.overrides, kind, item, (pick as { as?: string }).as);
      const first = seen.get(client);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: at(kind, i, 'as'), message: `"${client}" is already the name of ${kind} pick ${first}: give one of them another name with "as"` });
      } else seen.set(client, i);
    });
  }
  if (virtual.tools.length + virtual.prompts.length + virtual.resources.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['gateway', 'virtualServers', name], message: 'a virtual server needs at least one tool, prompt or resource' });
  }
}

/** Every check on overrides and virtual servers (schema-checks.ts runs it). */
export function checkOverrides(config: OverridesDocument, ctx: z.RefinementCtx): void {
  for (const [name, server] of Object.entries(config.mcpServers)) if (server.overrides !== undefined) checkRenames(name, server.overrides, ctx);
  for (const [name, virtual] of Object.entries(config.gateway.virtualServers)) checkVirtual(config, name, virtual, ctx);
}
