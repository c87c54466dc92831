/**
 * What the chain decided, for the audit record (log/audit-record.ts `rule` and `reason`): when a
 * stage refuses an audited request, chain.ts names the rule that refused it here, and
 * audit-entry.ts reads it from the request's record (`Pending.judged`). Only refusals are named;
 * an allowed call's record says `rule: null`. Computed on the refusal path only, never per call.
 *
 *   filters / policy  `policy.rules[<i>] (deny)`, `no policy rule grants it` (reason `policy`), or
 *                     `filters of <server>` / `picks or filters of virtual:<name>` (reason `filter`):
 *                     the same `decidedBy` the console's access view asks (router/policy.ts)
 *   step-up           `step-up: <missing scopes>` (GW_STEP_UP_REQUIRED)
 *   rate limit        `rateLimits.perTool` (GW_RATE_LIMITED)
 *   pinning           `pinning: <kind> <name> of <server>` (GW_DEFINITION_CHANGED)
 *   hooks             `mcpServers.<server>.hooks[<i>]` (GW_HOOK_DENIED, or GW_HOOK_FAILED when it failed closed)
 */
import { isGatewayError } from '../../errors/gateway-error.ts';
import { subjectOf } from '../../jsonrpc/methods.ts';
import type { JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { Kind, Policy } from '../../router/policy.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { StepUpNeed } from './gates.ts';

/** The rule that refused a request and why (a GW_* code, `policy` or `filter`). */
export interface Judged {
  readonly rule: string;
  readonly reason: string;
}

const KIND: Readonly<Record<string, Kind>> = { tool: 'tools', prompt: 'prompts', uri: 'resources' };

/** Filters or the policy hid what `request` names (the server's own name, canonical URI). */
export function hiddenJudged(request: JsonRpcRequest, server: string, endpoint: string, caller: Principal | undefined, policy: Policy | undefined): Judged {
  const subject = subjectOf(request.method);
  const name = subject === undefined ? undefined : request.params?.[subject.field];
  if (policy !== undefined && subject !== undefined && typeof name === 'string') {
    const rule = policy.decidedBy(caller, server, KIND[subject.kind] as Kind, name);
    if (rule === undefined) return { rule: 'no policy rule grants it', reason: 'policy' };
    if (rule.effect === 'deny') return { rule: `policy.rules[${rule.index}] (deny)`, reason: 'policy' };
  }
  // The policy grants it (or there is none): the target's filters, or a virtual server's picks, hid it.
  return { rule: endpoint.startsWith('virtual:') ? `picks or filters of ${endpoint}` : `filters of ${server}`, reason: 'filter' };
}

export function stepUpJudged(need: StepUpNeed): Judged {
  return { rule: `step-up: ${need.missing.join(' ')}`, reason: 'GW_STEP_UP_REQUIRED' };
}

/** A stage's refusal as a judgment; undefined for a failure that judges nothing (a bad URI, an unknown task). */
export function errorJudged(err: unknown, server: string): Judged | undefined {
  if (!isGatewayError(err)) return undefined;
  const { code, details, internal } = err;
  if (code === 'GW_RATE_LIMITED') return { rule: 'rateLimits.perTool', reason: code };
  if (code === 'GW_DEFINITION_CHANGED') return { rule: `pinning: ${String(details.kind)} ${String(details.name)} of ${server}`, reason: code };
  if (code === 'GW_HOOK_DENIED' || code === 'GW_HOOK_FAILED') {
    const hook = typeof internal?.hook === 'number' ? internal.hook : undefined;
    return { rule: hook === undefined ? `mcpServers.${server}.hooks` : `mcpServers.${server}.hooks[${hook}]`, reason: code };
  }
  return undefined;
}
