/**
 * The session core: one downstream peer and N >= 1 upstream members. One implementation, whatever
 * the endpoint, of what every session does: its requests (requests.ts: in-flight map, routing,
 * forwarding, cancel translation), server->client requests and their answers
 * (server-messages.ts), notifications, and ending (cancel what runs upstream, close the members,
 * end the streams).
 *
 * What differs between endpoints is a `Flavour` (flavour.ts): how the 2025 initialize is answered,
 * which member owns a request (or whether the gateway answers it itself), and how a member's answer
 * is written. The session built here is era-neutral; era-2025.ts puts the 2025 layer on top.
 * A single-target endpoint (single.ts) forwards to its one member, names untouched; an aggregate
 * (aggregate-session.ts) namespaces, merges lists and routes by name.
 */
import type { JsonRpcNotification } from '../jsonrpc/types.ts';
import { withEra2025 } from './era-2025.ts';
import { createEventLog } from './event-log.ts';
import type { ChainGates } from './chain/gates.ts';
import { createServerAsked } from './chain/server-asked.ts';
import type { CoreOptions, CoreParts, Flavour, Pending } from './flavour.ts';
import { checkInflight } from './inflight.ts';
import { ownsChild } from './limits.ts';
import type { Member, MemberHooks } from './member.ts';
import { createRequests } from './requests.ts';
import { pinNotification } from './pinning.ts';
import { createServerMessages } from './server-messages.ts';
import type { Session, SessionCore } from './session.ts';
import { createStreamSet } from './streams.ts';
import { createSessionConsent, declaresUrlElicitation, type SessionConsent } from './url-consent.ts';

/**
 * Builds a session: the era-neutral core, the flavour `build` makes from its parts, and the 2025
 * layer (era-2025.ts) on top.
 */
/** No gate configured: the chain runs its entrance, pinning and the send only. */
const NO_GATES: ChainGates = Object.freeze({});

export function createSessionCore(options: CoreOptions, build: (parts: CoreParts) => Flavour): Session {
  const { id, endpoint, limits, logger, onended, caller } = options;
  let protocolVersion: string | undefined;
  /** The client's initialize declared URL elicitation (url-consent.ts). */
  let urlDeclared = false;
  let consent: SessionConsent | undefined;
  const streams = createStreamSet({
    onsend: (message) => consent?.seen(message),
    log: createEventLog(limits.replayEvents, limits.replayBytes),
    logger,
    priming: () => protocolVersion !== undefined && protocolVersion >= '2025-11-25',
    keepFinished: 64,
    onabandon: (stream) => {
      for (const rec of inflight.values()) if (rec.stream === stream) requests.withdraw(rec, 'The client closed the response stream');
    },
  });
  // Made once per session, and only with tracing on: what every span says of the session.
  const { tracing, inflight: budget, observer } = options.services;
  const traced =
    tracing === undefined
      ? undefined
      : {
          tracing,
          origin: {
            sessionId: id,
            get protocolVersion() {
              return protocolVersion;
            },
            transport: caller.transport,
          },
        };
  const requests = createRequests(streams, logger, { budget, audit: options.audit, observer, traced, gates: options.gates ?? NO_GATES, namespaced: options.namespaced });
  const { inflight } = requests;
  let ended = false;
  let endPromise: Promise<void> | undefined;
  let opening = false;
  /** The client opened a standalone stream at least once (limits.ts: TTL class). */
  let streamed = false;
  const messages = createServerMessages({
    streams,
    limits,
    logger,
    tables: options.tables,
    live: () => !ended && protocolVersion !== undefined,
    namespaced: options.namespaced,
    held: caller.held === true,
    judge: createServerAsked(options.gates ?? NO_GATES, options.audit, () => session, caller.principal),
  });
  // Held sessions serve 2026 requests: their consents are input_required rounds (stateless/url-consent.ts).
  const waiters = options.services.consents;
  if (waiters !== undefined && caller.held !== true) {
    consent = createSessionConsent({ waiters, principal: caller.principal?.id ?? 'anonymous', messages, namespaced: options.namespaced, declaresUrl: () => urlDeclared });
  }

  /** Any other notification concerns every member the session has opened. */
  const broadcast = async (notification: JsonRpcNotification) => {
    const initialized = notification.method === 'notifications/initialized';
    const to: Member[] = [];
    for (const m of flavour.members()) {
      // Each member got its own `initialized`, except one the client's own initialize opened.
      if (initialized ? m.transparent : m.connection !== undefined || (m.transparent && m.failure === undefined)) to.push(m);
    }
    const one = to.length === 1;
    await Promise.all(
      to.map((m) => m.connect().then((c) => c.correlator.send(one ? notification : structuredClone(notification)), () => undefined)),
    );
  };

  const hooks: MemberHooks = {
    onrequest: messages.request,
    // Pinning on: a list_changed is judged again (pinning.ts); off, the member has no gate and nothing runs.
    onnotification: (member, notification) => {
      if (member.pins !== undefined) pinNotification(member, notification);
      messages.notification(member, notification);
    },
    onexit: (member, reason, final) => flavour.memberExit(member, reason, final),
    onready: (member) => flavour.memberReady(member),
  };

  const session: SessionCore = {
    id,
    endpoint,
    transport: caller.transport ?? 'streamable-http',
    principal: caller.principal?.id,
    openedAt: Date.now(),
    lastActivity: Date.now(),
    get protocolVersion() {
      return protocolVersion;
    },
    get ended() {
      return ended;
    },
    get busy() {
      if (opening || inflight.size > 0 || streams.busy) return true;
      for (const m of flavour.members()) if ((m.connection?.correlator.inflight ?? 0) > 0) return true;
      return false;
    },
    get usage() {
      const children: string[] = [];
      for (const m of flavour.members()) if (m.live && ownsChild(m.target)) children.push(m.name);
      return { initializing: opening, streamed, listening: streams.listening, children };
    },
    admit(count) {
      checkInflight(budget, inflight.size, count);
    },
    open(params) {
      return flavour.open(params);
    },
    serve(batch, sink, streamOptions, carrier, caller) {
      const stream = streams.open(sink, batch.length, streamOptions);
      for (const request of batch) requests.dispatch(request, stream, session, carrier, caller);
    },
    async handleNotification(notification) {
      if (notification.method === 'notifications/cancelled') return requests.cancel(notification.params);
      await broadcast(notification);
    },
    handleResponse(response) {
      return messages.answer(response);
    },
    async idle() {
      await Promise.all([...flavour.members()].map((m) => m.connection?.correlator.idle()));
    },
    end(reason) {
      if (endPromise) return endPromise;
      ended = true;
      messages.stop();
      consent?.end();
      logger.info({ reason }, 'session ended');
      endPromise = cancelAndClose(inflight.values(), [...flavour.members()], reason).finally(() => {
        // Closing the members answered every pending request; anything left no longer counts.
        requests.releaseAll();
        streams.endAll();
        onended(session);
      });
      return endPromise;
    },
  };

  const flavour = (requests.flavour = build({
    logger,
    streams,
    messages,
    hooks,
    session,
    consent,
    negotiated(version) {
      protocolVersion = version;
    },
    opening(on) {
      opening = on;
    },
  }));
  return withEra2025(session, {
    streams,
    initialize: (request) => {
      urlDeclared = declaresUrlElicitation(request.params);
      return flavour.initialize(request);
    },
    streamed: () => {
      streamed = true;
    },
  });
}

/**
 * The downstream went away with calls still running: tell each owning member, so it stops work
 * nobody will read (basic/utilities/cancellation), then close the members. Pending entries stay:
 * closing a member still answers each one onto its stream.
 */
async function cancelAndClose(pending: Iterable<Pending>, members: Member[], reason: string): Promise<void> {
  await Promise.all(
    [...pending].map((rec) =>
      rec.member?.connection?.correlator
        .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rec.upstreamId, reason: `Session ended: ${reason}` } })
        .catch(() => undefined),
    ),
  );
  await Promise.all(members.map((m) => m.close(reason)));
}
