/**
 * The chain's part in server-to-client requests (sampling, elicitation, roots asked by an
 * upstream; server-messages.ts relays them): the asking target's request hooks are asked first
 * (a hook whose `methods` match, e.g. `sampling/*`; the payload is the hooks protocol's own,
 * `phase: "request"`, and the method says the direction: a client never sends these), and a deny
 * or a hook failing closed answers the upstream with the error instead of asking the client; a
 * `modify` replaces the params. Then what the upstream asks passes its target's redaction before
 * the client (and the model behind it) sees it, and each one ends in an audit record naming the
 * method, the target that asked, how the client answered, or the hook that refused it.
 */
import type { JsonRpcRequest, JsonRpcResponse } from '../../jsonrpc/types.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import type { AuditSink } from '../../log/audit-record.ts';
import type { ObservedSession } from '../../log/observer.ts';
import type { Principal } from '../../upstream/caller.ts';
import { askedEntryOf } from './asked-entry.ts';
import { errorJudged } from './judged.ts';
import { dropRawText } from '../../jsonrpc/wire-text.ts';
import type { Member } from '../member.ts';
import type { ChainGates } from './gates.ts';

export interface ServerAsked {
  /**
   * The target's request hooks on `request` (before its id is rewritten): undefined when none
   * applies (relay at once); else the request to relay (a hook may have modified it), or a
   * rejection (GW_HOOK_DENIED, GW_HOOK_FAILED) to answer the upstream with, already audited.
   */
  hooked(member: Member, request: JsonRpcRequest): Promise<JsonRpcRequest> | undefined;
  /** Judges `request` (redacted in place) as it goes to the client; returns when it was asked (for the audit line). */
  asked(member: Member, request: JsonRpcRequest): number;
  /** The client's answer to it: the audit line. */
  answered(member: Member, method: string, started: number, response: JsonRpcResponse, downstreamId: number): void;
}

/** Undefined when there is nothing to judge (no audit log, no guard): server-messages.ts then does no work. */
export function createServerAsked(gates: ChainGates, audit: AuditSink | undefined, session: () => ObservedSession, caller: Principal | undefined): ServerAsked | undefined {
  const guard = gates.guard;
  if (guard === undefined && audit === undefined) return undefined;
  return {
    hooked(member, request) {
      const judging = guard?.request(request, session().principal, member.target, request);
      if (judging === undefined) return undefined;
      const started = performance.now();
      return judging.catch((err: unknown) => {
        const id = typeof request.id === 'string' || typeof request.id === 'number' ? request.id : 0;
        audit?.record(askedEntryOf(session(), caller, { method: request.method, server: member.name, id, started }, true, errorJudged(err, member.name)));
        throw err;
      });
    },
    asked(member, request) {
      if (guard !== undefined && isObject(request.params) && guard.redactAsked(member.target, request.params) > 0) dropRawText(request);
      return audit === undefined ? 0 : performance.now();
    },
    answered(member, method, started, response, downstreamId) {
      if (audit === undefined) return;
      audit.record(askedEntryOf(session(), caller, { method, server: member.name, id: downstreamId, started }, 'error' in response));
    },
  };
}
