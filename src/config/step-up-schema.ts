/**
 * `mcpServers.<name>.requiredScopes` (SEP-2350 step-up): per kind, globs on the server's own names
 * and URIs with the scopes a call naming a match needs (router/step-up.ts judges them). Strict,
 * like the rest of the config; docs/configuration.md has its rows.
 */
import { z } from 'zod';
import { scope } from './auth-schema.ts';
import { anObject, nonEmptyString } from './schema-kit.ts';

/** Glob -> the scopes a call naming a matching item needs (SEP-2350 step-up). */
const scopeRules = (what: string) =>
  z
    .record(nonEmptyString(), z.array(scope, { error: 'expected a list of scopes' }).min(1, { error: 'name at least one scope' }), {
      error: `expected an object of ${what} globs, each with a list of scopes`,
    })
    .refine((rules) => Object.keys(rules).length <= 256, { error: 'at most 256 globs per kind' })
    .optional();

/**
 * Unset: no item needs more than gateway.auth.scopes. Per kind, globs on the server's own names
 * (tools, prompts) or URIs (resources), whatever path or prefix the client used, each with the
 * scopes a call, get or read needs; a call needing scopes its token lacks gets 403 insufficient_scope.
 */
export const requiredScopesSchema = z
  .strictObject({ tools: scopeRules('tool name'), prompts: scopeRules('prompt name'), resources: scopeRules('resource URI') }, anObject)
  .optional();
