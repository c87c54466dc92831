/**
 * `discovery` of an aggregate endpoint (`gateway.aggregate`, a group, a virtual server): progressive
 * tool discovery. With `mode: "search"` the endpoint lists a few meta-tools (search the caller's
 * catalog, describe one tool, call one by name) and the `alwaysVisible` tools instead of its whole
 * catalog (docs/aggregation.md, "Progressive discovery").
 */
import { z } from 'zod';
import { anObject, nonEmptyString } from './schema-kit.ts';

export const discoverySchema = z.strictObject({
  /** "off": the endpoint lists every tool, as always. */
  mode: z.enum(['off', 'search'], { error: 'expected "off" or "search"' }).default('off'),
  /** Globs on the endpoint's tool names (as listed, with prefixes) still listed beside the meta-tools. */
  alwaysVisible: z.array(nonEmptyString(), { error: 'expected a list of tool name globs' }).default([]),
  /** Results of one search at most (a caller may ask for fewer). */
  maxResults: z.number({ error: 'expected a number' }).int({ error: 'expected an integer' }).min(1).max(50).default(8),
}, anObject);

export type DiscoveryEntry = z.output<typeof discoverySchema>;
