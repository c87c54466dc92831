/**
 * The chain's part in server-to-client requests (sampling, elicitation, roots asked by an
 * upstream; server-messages.ts relays them): what the upstream asks passes its target's redaction
 * before the client (and the model behind it) sees it, and each one ends in an audit line naming
 * the method, the target that asked and how the client answered. Request hooks are not asked
 * about them (their protocol judges calls to a target, not a target's calls to the client).
 */
import type { JsonRpcRequest, JsonRpcResponse } from '../../jsonrpc/types.ts';
import { isObject } from '../../jsonrpc/envelope.ts';
import type { Logger } from '../../log/logger.ts';
import { dropRawText } from '../../jsonrpc/wire-text.ts';
import type { Member } from '../member.ts';
import type { ChainGates } from './gates.ts';

export interface ServerAsked {
  /** Judges `request` (redacted in place) as it goes to the client; returns when it was asked (for the audit line). */
  asked(member: Member, request: JsonRpcRequest): number;
  /** The client's answer to it: the audit line. */
  answered(member: Member, method: string, started: number, response: JsonRpcResponse): void;
}

/** Undefined when there is nothing to judge (no audit log, no guard): server-messages.ts then does no work. */
export function createServerAsked(gates: ChainGates, audit: Logger | undefined): ServerAsked | undefined {
  const guard = gates.guard;
  if (guard === undefined && audit === undefined) return undefined;
  return {
    asked(member, request) {
      if (guard !== undefined && isObject(request.params) && guard.redactAsked(member.target, request.params) > 0) dropRawText(request);
      return audit === undefined ? 0 : performance.now();
    },
    answered(member, method, started, response) {
      if (audit === undefined) return;
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const outcome = 'error' in response ? 'error' : 'ok';
      audit.info({ method, direction: 'server-to-client', target: member.name, outcome, ms }, 'audit');
    },
  };
}
