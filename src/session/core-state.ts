/**
 * The session core's state (core.ts builds it) and the parts made over it: its streams, the trace
 * origin every span names, the members' hooks, the parts lent to the flavour, the era-neutral
 * session object, and ending. Each is made once per session; module functions take the state
 * instead of closing over a factory's locals, and nothing here allocates per request.
 */
import type { JsonRpcNotification } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { Traced } from './chain/chain.ts';
import type { Era2025Parts } from './era-2025.ts';
import { createEventLog } from './event-log.ts';
import type { CoreOptions, CoreParts, Flavour, Pending } from './flavour.ts';
import { checkInflight } from './inflight.ts';
import { ownsChild } from './limits.ts';
import type { Member, MemberHooks } from './member.ts';
import { pinNotification } from './pinning.ts';
import type { Requests } from './requests.ts';
import type { ServerMessages } from './server-messages.ts';
import type { SessionCore } from './session.ts';
import { createStreamSet, type StreamSet } from './streams.ts';
import { declaresUrlElicitation, type SessionConsent } from './url-consent.ts';

/** The mutable state of one session core. */
export interface CoreState {
  readonly options: CoreOptions;
  readonly logger: Logger;
  readonly streams: StreamSet;
  readonly requests: Requests;
  readonly messages: ServerMessages;
  /** The era-neutral session (era-2025.ts puts the 2025 layer on top). */
  readonly session: SessionCore;
  readonly flavour: Flavour;
  consent: SessionConsent | undefined;
  protocolVersion: string | undefined;
  /** The client's initialize declared URL elicitation (url-consent.ts). */
  urlDeclared: boolean;
  ended: boolean;
  endPromise: Promise<void> | undefined;
  opening: boolean;
  /** The client opened a standalone stream at least once (limits.ts: TTL class). */
  streamed: boolean;
}

export function coreStreams(s: CoreState): StreamSet {
  const { limits } = s.options;
  return createStreamSet({
    onsend: (message) => s.consent?.seen(message),
    log: createEventLog(limits.replayEvents, limits.replayBytes),
    logger: s.logger,
    priming: () => s.protocolVersion !== undefined && s.protocolVersion >= '2025-11-25',
    keepFinished: 64,
    onabandon: (stream) => {
      for (const rec of s.requests.inflight.values()) if (rec.stream === stream) s.requests.withdraw(rec, 'The client closed the response stream');
    },
  });
}

/** Made once per session, and only with tracing on: what every span says of the session. */
export function tracedOf(s: CoreState): Traced | undefined {
  const { tracing } = s.options.services;
  if (tracing === undefined) return undefined;
  return {
    tracing,
    origin: {
      sessionId: s.options.id,
      get protocolVersion() {
        return s.protocolVersion;
      },
      transport: s.options.caller.transport,
    },
  };
}

/** Any other notification concerns every member the session has opened. */
async function broadcast(s: CoreState, notification: JsonRpcNotification): Promise<void> {
  const initialized = notification.method === 'notifications/initialized';
  const to: Member[] = [];
  for (const m of s.flavour.members()) {
    // Each member got its own `initialized`, except one the client's own initialize opened.
    if (initialized ? m.transparent : m.connection !== undefined || (m.transparent && m.failure === undefined)) to.push(m);
  }
  const one = to.length === 1;
  await Promise.all(
    to.map((m) => m.connect().then((c) => c.correlator.send(one ? notification : structuredClone(notification)), () => undefined)),
  );
}

function memberHooks(s: CoreState): MemberHooks {
  const { messages } = s;
  return {
    onrequest: (member, request) => messages.request(member, request),
    // Pinning on: a list_changed is judged again (pinning.ts); off, the member has no gate and nothing runs.
    onnotification: (member, notification) => {
      if (member.pins !== undefined) pinNotification(member, notification);
      messages.notification(member, notification);
    },
    onexit: (member, reason, final) => s.flavour.memberExit(member, reason, final),
    onready: (member) => s.flavour.memberReady(member),
  };
}

/** What the core hands the flavour it builds. */
export function partsOf(s: CoreState): CoreParts {
  return {
    logger: s.logger,
    streams: s.streams,
    messages: s.messages,
    hooks: memberHooks(s),
    session: s.session,
    consent: s.consent,
    negotiated(version) {
      s.protocolVersion = version;
    },
    opening(on) {
      s.opening = on;
    },
  };
}

/** The 2025 layer's parts (era-2025.ts). */
export function eraPartsOf(s: CoreState): Era2025Parts {
  return {
    streams: s.streams,
    initialize: (request) => {
      s.urlDeclared = declaresUrlElicitation(request.params);
      return s.flavour.initialize(request);
    },
    streamed: () => {
      s.streamed = true;
    },
  };
}

/**
 * The era-neutral session. Its methods are closures over the state, made once per session: the
 * 2025 layer (era-2025.ts) hands them on detached.
 */
export function sessionOf(s: CoreState): SessionCore {
  const { options, streams, requests, messages } = s;
  const { inflight } = requests;
  const budget = options.services.inflight;
  const session: SessionCore = {
    id: options.id,
    endpoint: options.endpoint,
    transport: options.caller.transport ?? 'streamable-http',
    principal: options.caller.principal?.id,
    openedAt: Date.now(),
    lastActivity: Date.now(),
    get protocolVersion() {
      return s.protocolVersion;
    },
    get ended() {
      return s.ended;
    },
    get busy() {
      if (s.opening || inflight.size > 0 || streams.busy) return true;
      for (const m of s.flavour.members()) if ((m.connection?.correlator.inflight ?? 0) > 0) return true;
      return false;
    },
    get usage() {
      const children: string[] = [];
      for (const m of s.flavour.members()) if (m.live && ownsChild(m.target)) children.push(m.name);
      return { initializing: s.opening, streamed: s.streamed, listening: streams.listening, children };
    },
    admit(count) {
      checkInflight(budget, inflight.size, count);
    },
    open(params) {
      return s.flavour.open(params);
    },
    serve(batch, sink, streamOptions, carrier, caller) {
      const stream = streams.open(sink, batch.length, streamOptions);
      for (const request of batch) requests.dispatch(request, stream, session, carrier, caller);
    },
    async handleNotification(notification) {
      if (notification.method === 'notifications/cancelled') return requests.cancel(notification.params);
      await broadcast(s, notification);
    },
    handleResponse(response) {
      return messages.answer(response);
    },
    async idle() {
      await Promise.all([...s.flavour.members()].map((m) => m.connection?.correlator.idle()));
    },
    end(reason) {
      return endSession(s, reason);
    },
  };
  return session;
}

function endSession(s: CoreState, reason: string): Promise<void> {
  if (s.endPromise) return s.endPromise;
  s.ended = true;
  s.messages.stop();
  s.consent?.end();
  s.logger.info({ reason }, 'session ended');
  s.endPromise = cancelAndClose(s.requests.inflight.values(), [...s.flavour.members()], reason).finally(() => {
    // Closing the members answered every pending request; anything left no longer counts.
    s.requests.releaseAll();
    s.streams.endAll();
    s.options.onended(s.session);
  });
  return s.endPromise;
}

/**
 * How long a session's end waits for its cancel notes to be taken before closing its members
 * (which aborts a note still on its way). A note is fire-and-forget: a remote server answers its
 * POST with 202 at once; one that holds the 202 until the cancelled call's own POST closes would
 * otherwise hold the DELETE for the target's whole request timeout.
 */
export const CANCEL_NOTES_GRACE_MS = 1_000;

/**
 * The downstream went away with calls still running: tell each owning member, so it stops work
 * nobody will read (basic/utilities/cancellation), then close the members. Pending entries stay:
 * closing a member still answers each one onto its stream.
 */
async function cancelAndClose(pending: Iterable<Pending>, members: Member[], reason: string): Promise<void> {
  const notes = [...pending].map((rec) =>
    rec.member?.connection?.correlator
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.upstreamId, reason: `Session ended: ${reason}` } })
      .catch(() => undefined),
  );
  if (notes.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CANCEL_NOTES_GRACE_MS)));
    await Promise.race([Promise.all(notes), grace]);
    clearTimeout(timer);
  }
  await Promise.all(members.map((m) => m.close(reason)));
}
