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
import { canonicalGlob, foldName } from './canonical.ts';
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
  /**
   * Every scope the request needs, when some is missing: the base scopes every request needs
   * (`gateway.auth.scopes`, which the token already held to get this far) and every scope the
   * matching rules list, held or not. A challenge names all of them, so a client that asks for
   * exactly the challenged scopes (the SDK v1 does) keeps what it had; one that asks for the
   * union of held and named (SEP-2350) gets the same.
   */
  required(target: string, method: string, params: JsonObject | undefined): readonly string[];
  /** Every scope a rule names: listed in the protected-resource metadata's `scopes_supported`. */
  readonly scopes: readonly string[];
}

function compileKind(rules: ScopeRules, uris: boolean): Compiled {
  const out: Array<readonly [RegExp, readonly string[]]> = [];
  for (const [glob, scopes] of Object.entries(rules)) {
    // URIs: the canonical spelling the chain's entrance gives every request (router/canonical.ts).
    const re = compileGlobs([uris ? canonicalGlob(glob) : foldName(glob)]);
    if (re !== undefined) out.push([new RegExp(re.source, 'si'), scopes]);
  }
  return out;
}


/** Compiles the targets' rules; undefined when no target has any (nothing is judged per call). */
export function compileStepUp(config: ReadonlyMap<string, RequiredScopesConfig> | undefined, base: readonly string[] = []): StepUpRules | undefined {
  if (config === undefined || config.size === 0) return undefined;
  const byTarget = new Map<string, Readonly<Record<Kind, Compiled>>>();
  const all = new Set<string>();
  for (const [target, rules] of config) {
    byTarget.set(target, { tools: compileKind(rules.tools, false), prompts: compileKind(rules.prompts, false), resources: compileKind(rules.resources, true) });
    for (const kind of ['tools', 'prompts', 'resources'] as const) for (const scopes of Object.values(rules[kind])) for (const s of scopes) all.add(s);
  }
  /** The rules of `target` for what `method` names, and that name in the spelling they match; undefined when nothing is judged. */
  const subject = (target: string, method: string, params: JsonObject | undefined): readonly [Compiled, string] | undefined => {
    const named = NAMED[method];
    const rules = named === undefined ? undefined : byTarget.get(target)?.[named[0]];
    if (named === undefined || rules === undefined || rules.length === 0) return undefined;
    const value = params?.[named[1]];
    // A name that is not a string is the upstream's to refuse; it can match no item of it.
    if (typeof value !== 'string') return undefined;
    // Names fold (NFKC, case ignored); URIs arrive canonical from the chain's entrance.
    return [rules, named[0] === 'resources' ? value : foldName(value)];
  };
  return {
    scopes: [...all],
    missing(target, method, params, held) {
      const judged = subject(target, method, params);
      if (judged === undefined) return undefined;
      let missing: string[] | undefined;
      for (const [re, scopes] of judged[0]) {
        if (!re.test(judged[1])) continue;
        for (const s of scopes) if (held?.has(s) !== true && missing?.includes(s) !== true) (missing ??= []).push(s);
      }
      return missing;
    },
    required(target, method, params) {
      const out = [...base];
      const judged = subject(target, method, params);
      for (const [re, scopes] of judged?.[0] ?? []) if (re.test((judged as readonly [Compiled, string])[1])) for (const s of scopes) if (!out.includes(s)) out.push(s);
      return out;
    },
  };
}
