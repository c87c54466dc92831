/**
 * The contract between the session core (core.ts) and its flavours (single.ts, one target;
 * aggregate-session.ts, several): what a flavour decides (how the 2025 initialize is answered,
 * which member owns a request, how a member's answer is written) and what the core lends it.
 */
import type { GatewayError } from '../errors/gateway-error.ts';
import type { JsonObject, JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AuditSink } from '../log/audit-record.ts';
import type { ObservedRequest } from '../log/observer.ts';
import type { NameTable } from '../router/name-table.ts';
import type { Span } from '../telemetry/tracing.ts';
import type { Caller, Principal } from '../upstream/caller.ts';
import type { ChainGates } from './chain/gates.ts';
import type { Judged } from './chain/judged.ts';
import type { TaskOrigin } from './chain/tasks.ts';
import type { Member, MemberHooks } from './member.ts';
import type { ServerMessages } from './server-messages.ts';
import type { SessionServices } from './services.ts';
import type { SessionConsent } from './url-consent.ts';
import type { SessionCore } from './session.ts';
import type { OutStream, StreamSet } from './streams.ts';

/**
 * A downstream request being served: by the gateway itself, or forwarded to `member`. It is also
 * what observers get (log/observer.ts): the timings are filled only while someone observes.
 */
export interface Pending extends ObservedRequest {
  readonly key: string;
  readonly clientId: RequestId;
  readonly stream: OutStream;
  readonly method: string;
  readonly session: SessionCore;
  /** The revision of the request: its own (2026), else its session's. */
  readonly protocolVersion: string | undefined;
  member: Member | undefined;
  upstreamId: number;
  cancelled: boolean;
  /** Left the in-flight map (answered, failed or withdrawn): counted out of the in-flight caps once. */
  settled: boolean;
  /** The half-open probe of its target's circuit breaker: its answer closes the circuit. */
  probe: boolean;
  /** Audited requests only (tools/call, prompts/get, resources/read): what was named, when, and the arguments if the trail captures them. */
  audited: { readonly name: string; readonly started: number; readonly arguments?: unknown } | undefined;
  /** Tracing on: the request's SERVER span, and the CLIENT span of its upstream call once sent. */
  span: Span | undefined;
  upstreamSpan: Span | undefined;
  subject: string | undefined;
  /** Who sent this request, with its own token's scopes (step-up judges them, not the session's first token). */
  readonly caller: Principal | undefined;
  /** What the request names (a tool, prompt or URI) as the client spelled it, before routing: a refusal's message says it. */
  readonly asked: string | undefined;
  /**
   * Task-augmented calls and task requests only (chain/tasks.ts): the call that creates a task
   * (remembered when its answer names one), or the call a `tasks/result` is the result of.
   */
  task: TaskOrigin | undefined;
  /** Audited requests a chain stage refused: the rule that did and why (chain/judged.ts), for the audit record. */
  judged: Judged | undefined;
  startedAt: number;
  sentAt: number;
  upstreamMs: number;
  endedAt: number;
}

/**
 * The gateway's own answer to a request, no member involved: a result (a merged list, a ping), or
 * an error object sent as it is (a filtered name refused in the words servers use for an unknown one).
 */
export type LocalAnswer = { readonly local: JsonObject } | { readonly refuse: JsonRpcErrorObject };

/** What makes one kind of session: see the file comment. */
export interface Flavour {
  /** Every member, in config order. */
  members(): Iterable<Member>;
  /** The 2025 initialize: resolves with the answer to send (and calls `negotiated` on success). */
  initialize(request: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** See SessionCore.open: no client initialize, the members open with the composed handshake. */
  open(params: JsonObject): Promise<JsonObject>;
  /** The member that owns `request` (params rewritten for it), or the gateway's own answer. */
  route(request: JsonRpcRequest): Member | Promise<Member | LocalAnswer>;
  /**
   * A member's answer as the client gets it (ids already restored): the same object, changed in
   * place where the flavour rewrites it (then without its kept wire text: wire-text.ts).
   */
  answer(rec: Pending, response: JsonRpcResponse): JsonRpcResponse;
  /**
   * Rewrites a request, in place, before the session records it (progressive discovery: a
   * `call_tool` call becomes the call it names). Absent: requests are taken as sent.
   */
  unwrap?(request: JsonRpcRequest): void;
  /** A member went away; `final`: it will not come back in this session. */
  memberExit(member: Member, reason: GatewayError, final: boolean): void;
  memberReady(member: Member): void;
}

/** What the core hands the flavour it builds. */
export interface CoreParts {
  readonly logger: Logger;
  readonly streams: StreamSet;
  readonly messages: ServerMessages;
  /** Hooks for the members the flavour creates. */
  readonly hooks: MemberHooks;
  /** The 2025 handshake settled on this revision. */
  negotiated(version: string): void;
  /** Marks the session as opening upstreams (busy, and un-initialized for the limits). */
  opening(on: boolean): void;
  /** The session itself (to end it). */
  readonly session: SessionCore;
  /** Per-user upstream consents (url-consent.ts); undefined: no `gateway.oauth`, or a held session. */
  readonly consent: SessionConsent | undefined;
}

export interface CoreOptions {
  id: string;
  endpoint: string;
  limits: GatewayConfig['limits'];
  /** Already bound to the session (and target or endpoint). */
  logger: Logger;
  onended: (session: SessionCore) => void;
  /** Several targets behind one endpoint (server-messages.ts). */
  namespaced: boolean;
  tables: { readonly tools: NameTable; readonly prompts: NameTable };
  /** What every session shares (services.ts): its tracer, in-flight count and observer are the core's. */
  services: SessionServices;
  /** Where audit entries go (log/audit-record.ts); undefined: none. */
  audit?: AuditSink | undefined;
  /**
   * Who the session serves (upstream/caller.ts): its principal's id and how it came (default:
   * Streamable HTTP) are span attributes and observed labels; held for 2026 clients, server->client
   * requests keep their input names (server-messages.ts).
   */
  caller: Caller;
  /** See SessionSeed.gates. */
  gates?: ChainGates | undefined;
}
