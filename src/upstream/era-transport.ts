/**
 * The transport of a Streamable HTTP target whose era is decided when the connection starts
 * (`protocol: 2026`, or `auto` unless the era is remembered as 2025): `start()` asks `server/discover`
 * (era-probe.ts) and becomes either the 2025 session transport (streamable-http.ts) or the bridge
 * to a stateless 2026 upstream (modern-bridge.ts). Until then nothing else is sent: the correlator
 * sends nothing before `start()` resolves.
 */
import type { RemoteTargetConfig } from '../config/types.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';
import type { Transport } from '../transport/types.ts';
import { askDiscover, checkDiscovered, probeEra, type EraMemory } from './era-probe.ts';
import type { Principal } from './caller.ts';
import { createModernBridge } from './modern-bridge.ts';
import { createEraFirstTransport } from './era-first.ts';
import type { JsonObject } from '../jsonrpc/types.ts';

export interface EraTransportOptions {
  target: RemoteTargetConfig;
  logger: Logger;
  memory: EraMemory;
  principal: Principal | undefined;
  wire: StatelessHttpWire;
  /** How long `server/discover` may take (the target's startup deadline). */
  discoverTimeoutMs: number;
  /** Makes the 2025 session transport (only if the era turns out to be 2025). */
  legacy: () => Transport;
  /**
   * The connection serves a 2025 client (not a session held for a 2026 one): a server that lists
   * 2026-07-28 is first asked for a 2025 session (era-first.ts).
   */
  forClient2025?: boolean | undefined;
}

export function createEraTransport(options: EraTransportOptions): Transport {
  const { target, logger, memory, principal, wire } = options;
  const name = target.name;
  let inner: Transport | undefined;
  let closed = false;

  const closedError = () => new GatewayError('GW_UPSTREAM_CLOSED', `Upstream "${name}" connection is closed`, { target: name });

  /** The inner transport for the era, with the discover answer for a modern one. */
  const choose = async (): Promise<Transport> => {
    const timeoutMs = options.discoverTimeoutMs;
    const mode = target.protocol ?? 'auto';
    const known = mode === 'auto' ? memory.get(target, principal) : mode;
    if (known === '2025') return options.legacy();
    if (mode === '2026') {
      const discovered = checkDiscovered(name, await askDiscover(wire, name, timeoutMs));
      return createModernBridge({ target, logger, wire, discovered });
    }
    // `auto`: the handshake needs a discover answer anyway, so it is the probe every time.
    const outcome = await probeEra(wire, name, timeoutMs, logger);
    if (outcome.era === '2026') {
      memory.set(target, principal, '2026');
      // It names 2026-07-28 yet refused it twice: initialize would only be refused too.
      if (outcome.discovered === undefined) throw outcome.error;
      const discovered = outcome.discovered;
      const bridge = (found: JsonObject) => createModernBridge({ target, logger, wire, discovered: found });
      if (options.forClient2025 === true) {
        const native = memory.get(target, principal, 'for-2025-clients');
        if (native === '2025') return options.legacy();
        if (native === undefined) return createEraFirstTransport({ target, logger, memory, principal, legacy: options.legacy(), bridge, discovered });
      }
      if (known === undefined) logger.info('upstream speaks 2026-07-28 (server/discover); bridging it for 2025 clients');
      return bridge(discovered);
    }
    if (outcome.conclusive) {
      if (known === '2026') logger.warn({ why: outcome.why }, 'upstream no longer speaks 2026-07-28; using the 2025 protocol');
      memory.set(target, principal, '2025');
      return options.legacy();
    }
    // Known to be 2026: a 2025 handshake would only be refused; the probe's own failure says more.
    if (known === '2026') throw outcome.error;
    logger.warn({ why: outcome.why }, 'era probe inconclusive; this connection uses the 2025 protocol and the next one asks again');
    return options.legacy();
  };

  const transport: Transport = {
    async start() {
      if (closed) throw closedError();
      const chosen = await choose();
      if (closed) {
        await chosen.close();
        throw closedError();
      }
      chosen.onmessage = (message) => transport.onmessage?.(message);
      chosen.onclose = (reason) => transport.onclose?.(reason);
      chosen.onundeliverable = (id, error) => transport.onundeliverable?.(id, error);
      inner = chosen;
      await chosen.start();
    },
    send(message, sendOptions) {
      return inner === undefined ? Promise.reject(closedError()) : inner.send(message, sendOptions);
    },
    close() {
      closed = true;
      if (inner !== undefined) return inner.close();
      transport.onclose?.();
      return Promise.resolve();
    },
  };
  return transport;
}
