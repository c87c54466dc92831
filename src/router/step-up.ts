/**
 * Per-tool step-up (the 2026-07-28 authorization rule, SEP-2350): which scopes a `tools/call`, a
 * `prompts/get` or a `resources/read` needs beyond `gateway.auth.scopes`, from
 * `mcpServers.<name>.requiredScopes`, and which of them the caller's token lacks.
 *
 * Judged after routing, on the target's own names: an aggregate's `<prefix>__name` has been
 * restored to `name` and a resource URI decoded, so the server's path, `/mcp`, a group, WebSocket,
 * legacy SSE and a 2026 request all meet the same rule. A name matching several globs needs every
 * scope they list. Matching fails closed against look-alikes: the name is compared after Unicode
 * NFKC normalisation and trimming, without regard to case, so `Delete_File` or a full-width
 * `ｄelete_file` needs what `delete_*` asks, whatever the upstream makes of such a name.
 */
import type { RequiredScopesConfig, ScopeRules } from '../config/types.ts';
import type { JsonObject } from '../jsonrpc/types.ts';
import { compileGlobs } from './glob.ts';

type Kind = keyof RequiredScopesConfig;

/** The requests step-up judges: the kind of item each names, and the param naming it. */
const NAMED: Readonly<Record<string, readonly [Kind, 'name' | 'uri']>> = {
  'tools/call': ['tools', 'name'],
  'prompts/get': ['prompts', 'name'],
  'resources/read': ['resources', 'uri'],
};

type Compiled = ReadonlyArray<readonly [RegExp, readonly string[]]>;

export interface StepUpRules {
  /**
   * The scopes `params` of a `method` request to `target` needs that `held` lacks, in rule order;
   * undefined when none is missing (or the request names nothing judged).
   */
  missing(target: string, method: string, params: JsonObject | undefined, held: ReadonlySet<string> | undefined): readonly string[] | undefined;
  /** Every scope a rule names: listed in the protected-resource metadata's `scopes_supported`. */
  readonly scopes: readonly string[];
}

function compileKind(rules: ScopeRules): Compiled {
  const out: Array<readonly [RegExp, readonly string[]]> = [];
  for (const [glob, scopes] of Object.entries(rules)) {
    const re = compileGlobs([fold(glob)]);
    if (re !== undefined) out.push([new RegExp(re.source, 'si'), scopes]);
  }
  return out;
}

/** The spelling names are compared in: NFKC, trimmed (case is ignored by the expressions). */
const fold = (name: string) => name.normalize('NFKC').trim();

/** Compiles the targets' rules; undefined when no target has any (nothing is judged per call). */
export function compileStepUp(config: ReadonlyMap<string, RequiredScopesConfig> | undefined): StepUpRules | undefined {
  if (config === undefined || config.size === 0) return undefined;
  const byTarget = new Map<string, Readonly<Record<Kind, Compiled>>>();
  const all = new Set<string>();
  for (const [target, rules] of config) {
    byTarget.set(target, { tools: compileKind(rules.tools), prompts: compileKind(rules.prompts), resources: compileKind(rules.resources) });
    for (const kind of ['tools', 'prompts', 'resources'] as const) for (const scopes of Object.values(rules[kind])) for (const s of scopes) all.add(s);
  }
  return {
    scopes: [...all],
    missing(target, method, params, held) {
      const named = NAMED[method];
      const rules = named === undefined ? undefined : byTarget.get(target)?.[named[0]];
      if (rules === undefined || rules.length === 0) return undefined;
      const value = params?.[(named as readonly [Kind, string])[1]];
      // A name that is not a string is the upstream's to refuse; it can match no item of it.
      if (typeof value !== 'string') return undefined;
      const name = fold(value);
      let missing: string[] | undefined;
      for (const [re, scopes] of rules) {
        if (!re.test(name)) continue;
        for (const s of scopes) if (held?.has(s) !== true && missing?.includes(s) !== true) (missing ??= []).push(s);
      }
      return missing;
    },
  };
}
