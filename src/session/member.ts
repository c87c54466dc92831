/**
 * A session's view of one of its upstreams: the supervised upstream (upstream/supervisor.ts: start,
 * handshake, restart) plus what the endpoint decides about the target: which of its names are
 * exposed, under which prefix, and whether it starts with the session.
 */
import type { PinGate } from '../governance/pin-gate.ts';
import type { Exposure } from '../router/list-merge.ts';
import { createSupervisedUpstream, type SupervisedUpstream, type SupervisorOptions } from '../upstream/supervisor.ts';

export { unavailable } from '../upstream/handshake.ts';

export interface MemberSettings {
  readonly exposure: Exposure;
  /** Opened when the session initializes, instead of on first need. */
  readonly eager: boolean;
  /** Its target's pinning (governance/pin-gate.ts); undefined: pinning off, nothing is judged. */
  readonly pins?: PinGate | undefined;
}

export type Member = SupervisedUpstream & MemberSettings;
export type MemberHooks = SupervisorOptions<Member>['hooks'];
export type MemberOptions = SupervisorOptions<Member> & MemberSettings;

export function createMember(options: MemberOptions): Member {
  const { exposure, eager, pins, ...supervisor } = options;
  return createSupervisedUpstream<MemberSettings>(supervisor, { exposure, eager, pins });
}
