/**
 * A 2025 client's connection to a server whose `server/discover` lists 2026-07-28. Many servers
 * serve both eras at one URL (SDK v2 servers, the conformance repo's reference server); a 2025
 * client reached through the 2026 bridge loses what the bridge cannot carry (a server that asks
 * the client mid-call in 2025 terms, `resources/subscribe` on a server that offers no
 * `resourceSubscriptions`). So the client's own era is tried first: its `initialize` goes out on
 * the 2025 session transport, and only when the server refuses it (a JSON-RPC error, or an HTTP
 * 4xx) does the connection become the bridge, which answers that same `initialize` from the
 * discover result. The client sees one handshake either way. The outcome is remembered with the
 * era (era-probe.ts, question 'for-2025-clients'), so the next connection goes straight to it.
 */
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { idKey, isErrorResponse, isRequest, isResponse } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcMessage, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Logger } from '../log/logger.ts';
import type { SendOptions, Transport } from '../transport/types.ts';
import type { EraMemory } from './era-probe.ts';
import type { Principal } from './caller.ts';

export interface EraFirstOptions {
  target: RemoteTargetConfig;
  logger: Logger;
  memory: EraMemory;
  principal: Principal | undefined;
  /** The 2025 session transport, tried first. */
  legacy: Transport;
  /** The bridge, made only if the server refuses the 2025 handshake. */
  bridge: (discovered: JsonObject) => Transport;
  discovered: JsonObject;
}

/** A 4xx from the 2025 handshake: the server does not take 2025 sessions (a 5xx or a network failure says nothing). */
function refusesSessions(err: unknown): boolean {
  if (!(err instanceof GatewayError) || err.code !== 'GW_UPSTREAM_HTTP_ERROR') return false;
  const status = err.details.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 408 && status !== 429;
}

export function createEraFirstTransport(options: EraFirstOptions): Transport {
  const { target, logger, memory, principal } = options;
  let inner: Transport = options.legacy;
  /** The initialize on trial: its wire id and what to send the bridge if the server refuses it. */
  let trial: { key: string; message: JsonRpcRequest; sendOptions: SendOptions | undefined } | undefined;
  let decided = false;

  const attach = (chosen: Transport) => {
    chosen.onmessage = (message) => receive(message);
    chosen.onclose = (reason) => transport.onclose?.(reason);
    chosen.onundeliverable = (id, error) => transport.onundeliverable?.(id, error);
  };

  const keep = () => {
    decided = true;
    trial = undefined;
    memory.set(target, principal, '2025', 'for-2025-clients');
    logger.info('upstream serves both eras; 2025 clients get 2025 sessions there');
  };

  /** The server refused the client's era: become the bridge and hand it the same initialize. */
  const fallBack = async (why: string) => {
    const pending = trial!;
    decided = true;
    trial = undefined;
    memory.set(target, principal, '2026', 'for-2025-clients');
    logger.info({ why }, 'upstream refused a 2025 session; bridging it for 2025 clients');
    const old = inner;
    const ignore = () => undefined;
    old.onmessage = ignore;
    old.onclose = ignore;
    old.onundeliverable = ignore;
    void old.close().catch(() => undefined);
    inner = options.bridge(options.discovered);
    attach(inner);
    await inner.start();
    await inner.send(pending.message, pending.sendOptions);
  };

  const receive = (message: JsonRpcMessage) => {
    if (trial !== undefined && isResponse(message) && message.id !== null && idKey(message.id) === trial.key) {
      if (!isErrorResponse(message)) keep();
      else {
        // The bridge could not start: the connection is unusable, and the handshake fails with why.
        fallBack(`initialize answered with error ${message.error.code}`).catch((err: unknown) => transport.onclose?.(toGatewayError(err)));
        return;
      }
    }
    transport.onmessage?.(message);
  };

  const transport: Transport = {
    async start() {
      attach(inner);
      await inner.start();
    },
    async send(message, sendOptions) {
      if (!decided && trial === undefined && isRequest(message) && message.method === 'initialize') {
        trial = { key: idKey(message.id), message, sendOptions };
        try {
          await inner.send(message, sendOptions);
        } catch (err) {
          if (trial === undefined || !refusesSessions(err)) throw err;
          await fallBack(`initialize answered HTTP ${String((err as GatewayError).details.status)}`);
        }
        return;
      }
      return inner.send(message, sendOptions);
    },
    close() {
      return inner.close();
    },
  };
  return transport;
}
