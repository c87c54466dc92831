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
import type { ChainGates } from './chain/gates.ts';
import { createServerAsked } from './chain/server-asked.ts';
import { coreStreams, eraPartsOf, partsOf, sessionOf, tracedOf, type CoreState } from './core-state.ts';
import { withEra2025 } from './era-2025.ts';
import type { CoreOptions, CoreParts, Flavour } from './flavour.ts';
import type { Logger } from '../log/logger.ts';
import { createRequests, type Requests } from './requests.ts';
import { createServerMessages, type ServerMessages } from './server-messages.ts';
import type { Session, SessionCore } from './session.ts';
import type { StreamSet } from './streams.ts';
import { createSessionConsent, type SessionConsent } from './url-consent.ts';

/** No gate configured: the chain runs its entrance, pinning and the send only. */
const NO_GATES: ChainGates = Object.freeze({});

/**
 * Builds a session: the era-neutral core, the flavour `build` makes from its parts, and the 2025
 * layer (era-2025.ts) on top.
 */
export function createSessionCore(options: CoreOptions, build: (parts: CoreParts) => Flavour): Session {
  const core = new Core(options, build);
  return withEra2025(core.session, eraPartsOf(core));
}

/** The core's state; what is made over it (the session object, hooks, parts) is in core-state.ts. */
class Core implements CoreState {
  readonly options: CoreOptions;
  readonly logger: Logger;
  readonly streams: StreamSet;
  readonly requests: Requests;
  readonly messages: ServerMessages;
  readonly session: SessionCore;
  readonly flavour: Flavour;
  consent: SessionConsent | undefined = undefined;
  protocolVersion: string | undefined = undefined;
  urlDeclared = false;
  ended = false;
  endPromise: Promise<void> | undefined = undefined;
  opening = false;
  streamed = false;

  constructor(options: CoreOptions, build: (parts: CoreParts) => Flavour) {
    const { logger, caller } = options;
    this.options = options;
    this.logger = logger;
    this.streams = coreStreams(this);
    const { inflight: budget, observer } = options.services;
    const gates = options.gates ?? NO_GATES;
    this.requests = createRequests(this.streams, logger, { budget, audit: options.audit, observer, traced: tracedOf(this), gates, namespaced: options.namespaced });
    this.messages = createServerMessages({
      streams: this.streams,
      limits: options.limits,
      logger,
      tables: options.tables,
      live: () => !this.ended && this.protocolVersion !== undefined,
      namespaced: options.namespaced,
      held: caller.held === true,
      judge: createServerAsked(gates, options.audit, () => this.session, caller.principal),
    });
    // Held sessions serve 2026 requests: their consents are input_required rounds (stateless/url-consent.ts).
    const waiters = options.services.consents;
    if (waiters !== undefined && caller.held !== true) {
      this.consent = createSessionConsent({ waiters, principal: caller.principal?.id ?? 'anonymous', messages: this.messages, namespaced: options.namespaced, declaresUrl: () => this.urlDeclared });
    }
    this.session = sessionOf(this);
    this.flavour = this.requests.flavour = build(partsOf(this));
  }
}
