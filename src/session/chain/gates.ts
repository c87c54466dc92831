/**
 * The gates of the chain (chain.ts) that the gateway configures once and every session shares:
 * the per-tool rate limit (bound to the session's principal), step-up and the targets' hooks and
 * redaction. One type, passed by reference from the runtime through the store and the session
 * core to the chain: no layer re-declares them one by one.
 */
import type { JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { Policy } from '../../router/policy.ts';
import { foldName } from '../../router/canonical.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { CallGuard } from '../hooks/guard.ts';

/**
 * Takes one `tools/call` of `tool` (the server's own name) on `target` from the session's
 * principal; throws GW_RATE_LIMITED when over the limit. Judged after routing, so every path and
 * spelling of one tool (a server path, an aggregate's prefixed name, WebSocket, 2026) is one bucket.
 */
export type ToolLimit = (target: string, tool: string) => Promise<void> | undefined;

/**
 * The scopes a request routed to `target` (names restored to the server's own, URIs canonical)
 * needs when the principal's token lacks some of them (router/step-up.ts); undefined when none is
 * missing. Judged after routing, like ToolLimit, so every path and spelling of one item meets one rule.
 */
export type StepUpCheck = (target: string, request: JsonRpcRequest, caller: Principal | undefined) => StepUpNeed | undefined;

/** What a step-up refusal names: every scope the request needs (so a client asking for exactly these keeps its base), and which of them were missing. */
export interface StepUpNeed {
  readonly required: readonly string[];
  readonly missing: readonly string[];
}

export interface ChainGates {
  /** The per-tool rate limit, bound to the session's principal; undefined: none. */
  readonly limitTool?: ToolLimit | undefined;
  /** Step-up over the rules in force (step-up.ts); undefined: none. */
  readonly stepUp?: StepUpCheck | undefined;
  /** The targets' hooks and redaction (hooks/guard.ts); undefined: none. */
  readonly guard?: CallGuard | undefined;
  /** The policy in force (the endpoint table's): only to name the rule of a refusal in the audit record (judged.ts). */
  readonly policy?: (() => Policy | undefined) | undefined;
}

/**
 * Takes the per-tool token of a `tools/call` (after routing: the aggregate restored the server's
 * own name, so every path is one bucket); other requests take none. The bucket is named in the
 * folded spelling step-up and policy denies match in (NFKC, trimmed, any case): a server that reads
 * `ECHO` or a full-width `ｅcho` as `echo` gives no second bucket (issue 30 outside probe); two
 * tools differing only in case share one, a limit stricter than asked, never looser. Throws
 * GW_RATE_LIMITED, or returns the promise of a shared store's verdict.
 */
export function takeToolToken(limit: ToolLimit | undefined, target: string, request: JsonRpcRequest): Promise<void> | undefined {
  if (limit === undefined || request.method !== 'tools/call' || typeof request.params?.name !== 'string') return undefined;
  return limit(target, foldName(request.params.name).toLowerCase());
}
