/**
 * What the MCP registry serves: `server.json` documents (ServerDetail) wrapped in the API's
 * ServerResponse and ServerList (registry API v0.1, server.json schema 2025-12-11). Loose on
 * purpose, like everything a peer sends (docs/architecture.md): unknown fields pass, only the fields
 * `registry add` reads are checked, so a newer schema revision with more fields still imports.
 */
import { z } from 'zod';

/** Registry strings are short; a megabyte-long value is a broken or hostile registry. */
const text = z.string().max(4_096);

/** An input of server.json (argument, environment variable, header, URL variable). */
const inputSchema = z.looseObject({
  description: text.optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  value: text.optional(),
  default: text.optional(),
  valueHint: text.optional(),
  choices: z.array(text).max(256).optional(),
  format: text.optional(),
});

const withVariables = inputSchema.extend({ variables: z.record(text, inputSchema).optional() });

export const argumentSchema = withVariables.extend({
  type: z.enum(['positional', 'named']),
  name: text.optional(),
  isRepeated: z.boolean().optional(),
});

export const keyValueSchema = withVariables.extend({ name: text.min(1) });

const transportSchema = z.looseObject({
  type: text,
  url: text.optional(),
  headers: z.array(keyValueSchema).max(256).optional(),
  variables: z.record(text, inputSchema).optional(),
});

export const packageSchema = z.looseObject({
  registryType: text,
  registryBaseUrl: text.optional(),
  identifier: text.min(1),
  version: text.optional(),
  runtimeHint: text.optional(),
  transport: transportSchema.optional(),
  runtimeArguments: z.array(argumentSchema).max(256).optional(),
  packageArguments: z.array(argumentSchema).max(256).optional(),
  environmentVariables: z.array(keyValueSchema).max(256).optional(),
});

export const serverDetailSchema = z.looseObject({
  name: text.min(1),
  description: text.optional(),
  title: text.optional(),
  version: text.optional(),
  websiteUrl: text.optional(),
  packages: z.array(packageSchema).max(64).optional(),
  remotes: z.array(transportSchema).max(64).optional(),
});

export const serverResponseSchema = z.looseObject({
  server: serverDetailSchema,
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export const serverListSchema = z.looseObject({
  servers: z.array(serverResponseSchema),
  metadata: z.looseObject({ nextCursor: z.string().nullish(), count: z.number().optional() }).optional(),
});

export type RegistryInput = z.output<typeof inputSchema>;
export type RegistryArgument = z.output<typeof argumentSchema>;
export type RegistryKeyValue = z.output<typeof keyValueSchema>;
export type RegistryPackage = z.output<typeof packageSchema>;
export type RegistryRemote = z.output<typeof transportSchema>;
export type ServerDetail = z.output<typeof serverDetailSchema>;
export type ServerResponse = z.output<typeof serverResponseSchema>;
export type ServerList = z.output<typeof serverListSchema>;

/** The registry's own lifecycle status of an entry (`active`, `deprecated`, `deleted`), if it says. */
export function statusOf(response: ServerResponse): string | undefined {
  const official = response._meta?.['io.modelcontextprotocol.registry/official'];
  if (typeof official !== 'object' || official === null || !('status' in official)) return undefined;
  return typeof official.status === 'string' ? official.status : undefined;
}
