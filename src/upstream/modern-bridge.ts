/**
 * A 2026-07-28 (stateless) upstream behind a Transport that behaves like a 2025 server, so the
 * correlator, the supervisor and the session treat it as any other member and a 2025 client
 * downstream never learns the difference (issue 12 item 4; docs/eras.md).
 *
 * - `initialize` is answered here, from the upstream's `server/discover` (serverInfo,
 *   capabilities, instructions) and the version negotiated with the 2025 client; the client's
 *   capabilities and info go into every later request's `_meta` envelope.
 * - `notifications/initialized` opens a `subscriptions/listen` stream for the list_changed kinds
 *   the upstream offers (listen-stream.ts), whose notifications go to the client as a 2025
 *   server's would; other client notifications and `ping` stay here (2026 has no handshake and
 *   no ping); `logging/setLevel` is remembered and sent as the `_meta` logLevel of
 *   every later request (2026 carries the level per request); resources/(un)subscribe change the
 *   listen stream's `resourceSubscriptions` when the upstream offers subscriptions
 *   (resource-subscriptions.ts), else get "Method not found" (not offered).
 * - Every other request is one stateless POST (transport/stateless-http.ts) under the request's
 *   id, with the reserved `_meta` keys the client may have sent replaced by ours, and for
 *   tools/call the `Mcp-Param-*` headers its tool declares (param-headers.ts, learnt from the
 *   tools/list answers relayed; a call refused for them, which did not run, is sent once more
 *   after the tools are listed again).
 * - `resultType: complete` (or none) is the answer; `resultType` and the reserved `_meta` keys
 *   are removed, since 2025 results have neither. `input_required` becomes real server->client
 *   requests (input-requests.ts); once all are answered the request is sent again under a NEW id
 *   with `inputResponses` and the `requestState` exactly as the upstream gave it. Any other
 *   `resultType` fails the request (GW_UPSTREAM_INVALID_ANSWER).
 * - A cancel (the client's, or the correlator's on a timeout) is the abort of the request's send
 *   signal, which closes its POST: in 2026 closing the stream is the cancel. The correlator's
 *   `notifications/cancelled` that goes with it is dropped here (2026 has none). Nothing is replayed.
 */
import { GatewayError, toErrorResponse } from '../errors/gateway-error.ts';
import { isObject, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import { META, withoutReservedMeta } from '../jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../jsonrpc/types.ts';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { RemoteTargetConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import type { AbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';
import type { SendOptions, Transport } from '../transport/types.ts';
import { createInputAsker, type InputAsker } from './input-requests.ts';
import { createListenStream, listenFilter, type ListenStream } from './listen-stream.ts';
import { createResourceSubscriptions, type ResourceSubscriptions } from './resource-subscriptions.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-identity.ts';
import { createParamTable } from './param-headers.ts';
import { forward, type BridgeState } from './modern-forward.ts';

export { MAX_INPUT_ROUNDS } from './modern-forward.ts';

/** Client capabilities the 2026 envelope knows (schema/2026-07-28 ClientCapabilities). */
const CLIENT_CAPABILITY_KEYS = ['experimental', 'sampling', 'elicitation', 'roots', 'extensions'];

export interface ModernBridgeOptions {
  target: RemoteTargetConfig;
  logger: Logger;
  wire: StatelessHttpWire;
  /** The upstream's `server/discover` result, already checked to list 2026-07-28. */
  discovered: JsonObject;
}

/**
 * Capabilities for a 2025 client: list_changed and per-resource subscriptions are relayed from a
 * `subscriptions/listen` stream (listen-stream.ts); `resources.subscribe` only when offered (true).
 */
export function toLegacyCapabilities(capabilities: unknown): JsonObject {
  const out: JsonObject = isObject(capabilities) ? { ...capabilities } : {};
  if (isObject(out.resources) && out.resources.subscribe !== undefined && out.resources.subscribe !== true) {
    const { subscribe: _s, ...rest } = out.resources;
    out.resources = rest;
  }
  return out;
}

/** Whether a 2026 upstream's capabilities offer per-resource subscriptions. */
const offersSubscribe = (capabilities: unknown) => isObject(capabilities) && isObject(capabilities.resources) && capabilities.resources.subscribe === true;

export function createModernBridge(options: ModernBridgeOptions): Transport {
  return new ModernBridge(options);
}

/**
 * The bridge is its own state (BridgeState): the client's handshake, the open POSTs, the tools'
 * header declarations; its methods are on the class, one copy for every bridge. A request's
 * rounds are forward() in modern-forward.ts.
 */
class ModernBridge implements Transport, BridgeState {
  readonly name: string;
  readonly logger: Logger;
  readonly wire: StatelessHttpWire;
  private readonly discovered: JsonObject;
  private clientCapabilities: JsonObject = {};
  private clientInfo: unknown;
  private logLevel: string | undefined;
  closed = false;
  readonly calls = new Map<string, AbortHandle>();
  retryIds = 0;
  readonly tools = createParamTable();
  readonly up = (message: JsonRpcMessage): void => {
    if (!this.closed) this.onmessage?.(message);
  };
  readonly asker: InputAsker;
  private readonly answer = (id: RequestId, result: JsonObject): void => queueMicrotask(() => this.up({ jsonrpc: '2.0', id, result }));
  private readonly subscriptions: ResourceSubscriptions | undefined;
  private readonly listen: ListenStream | undefined;
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: (reason?: GatewayError) => void;

  constructor({ target, logger, wire, discovered }: ModernBridgeOptions) {
    this.name = target.name;
    this.logger = logger;
    this.wire = wire;
    this.discovered = discovered;
    this.asker = createInputAsker(this.name, this.up);
    const filter = listenFilter(discovered.capabilities);
    const subscribable = offersSubscribe(discovered.capabilities);
    this.subscriptions = subscribable ? createResourceSubscriptions(this.name, () => this.listen!, this.answer) : undefined;
    const deliver = (n: JsonRpcNotification) => this.subscriptions?.wants(n) === false || this.up(n);
    this.listen =
      filter === undefined && !subscribable ? undefined : createListenStream({ wire, logger, filter: filter ?? {}, envelope: () => this.envelope(undefined), deliver });
  }

  envelope(meta: unknown): JsonObject {
    const out = withoutReservedMeta(meta);
    out[META.protocolVersion] = MODERN_PROTOCOL_VERSION;
    out[META.clientCapabilities] = this.clientCapabilities;
    out[META.clientInfo] = isObject(this.clientInfo) ? this.clientInfo : GATEWAY_CLIENT_INFO;
    if (this.logLevel !== undefined) out[META.logLevel] = this.logLevel;
    return out;
  }

  start(): Promise<void> {
    return this.closed ? Promise.reject(new GatewayError('GW_UPSTREAM_CLOSED', undefined, { target: this.name })) : Promise.resolve();
  }

  async send(message: JsonRpcMessage, sendOptions?: SendOptions): Promise<void> {
    if (this.closed) throw new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${this.name}" connection is closed`, { target: this.name });
    if (!isRequest(message)) return this.notify(message);
    switch (message.method) {
      case 'initialize':
        return this.initialize(message);
      case 'ping':
        return this.answer(message.id, {});
      case 'logging/setLevel':
        this.logLevel = typeof message.params?.level === 'string' ? message.params.level : undefined;
        return this.answer(message.id, {});
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        if (this.subscriptions !== undefined) return this.subscriptions.change(message);
        queueMicrotask(() => this.up(toErrorResponse(message.id, new GatewayError('GW_METHOD_NOT_FOUND'))));
        return;
      default:
        return forward(this, message, sendOptions);
    }
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.listen?.close();
      for (const [key, abort] of this.calls) {
        this.asker.withdraw(key, 'closed');
        abort.abort();
      }
      this.calls.clear();
      this.onclose?.();
    }
    return Promise.resolve();
  }

  private initialize(request: JsonRpcRequest): void {
    const { discovered, name } = this;
    const params = request.params ?? {};
    const caps = isObject(params.capabilities) ? params.capabilities : {};
    this.clientCapabilities = Object.fromEntries(CLIENT_CAPABILITY_KEYS.filter((k) => caps[k] !== undefined).map((k) => [k, caps[k]]));
    this.clientInfo = params.clientInfo;
    const meta = discovered._meta;
    const serverInfo = isObject(meta) && isObject(meta[META.serverInfo]) ? meta[META.serverInfo] : { name, version: 'unknown' };
    this.answer(request.id, {
      protocolVersion: isSupportedVersion(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
      capabilities: toLegacyCapabilities(discovered.capabilities),
      serverInfo,
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    });
  }

  private notify(message: JsonRpcMessage): Promise<void> | undefined {
    if (isResponse(message)) {
      if (!this.asker.answer(message)) this.logger.debug({ id: message.id }, 'answer to no input request of ours; dropped');
      return;
    }
    // The client is ready for notifications: listen for the upstream's (the 2025 GET stream's part).
    // The send is done once the upstream acknowledged it (bounded: listen-stream.ts), so the
    // handshake that sent it ends after that, and nothing the upstream says once the client is
    // answered is lost. Any other (cancelled: the send's signal did it; roots/list_changed...): 2026 has none.
    if (message.method === 'notifications/initialized') return this.listen?.open();
  }
}
