/**
 * An in-memory transport pair for unit tests of the layers above the wire (correlator, session).
 *
 * It behaves like a real wire where that matters to those layers: delivery is asynchronous (a
 * handler never runs inside the `send` that caused it), messages are copied through JSON text (a
 * receiver cannot mutate the sender's object; raw ids survive as on a real wire), order is kept,
 * and closing one side closes the other.
 */
import { GatewayError } from '../errors/gateway-error.ts';
import { parseJson } from '../jsonrpc/envelope.ts';
import type { JsonRpcMessage } from '../jsonrpc/types.ts';
import type { Transport } from './types.ts';

export interface MemoryTransport extends Transport {
  /** Whether this side is closed (by itself, its peer, or `fail`). */
  readonly closed: boolean;
  /**
   * Simulates the wire dying from this side, as a crash would: this side's `onclose` gets no
   * reason and the peer's gets `reason` (e.g. GW_UPSTREAM_EXITED). No-op once closed.
   */
  fail(reason: GatewayError): void;
}

/**
 * Two connected transports: what one side sends, the other receives. `close()` on either side
 * calls its own `onclose()` without a reason and the peer's with GW_UPSTREAM_CLOSED, after every
 * message already sent has been delivered.
 */
export function createMemoryTransportPair(): [MemoryTransport, MemoryTransport] {
  const a = createSide();
  const b = createSide();
  a.peer = b;
  b.peer = a;
  return [a.transport, b.transport];
}

interface Side {
  transport: MemoryTransport;
  peer: Side | undefined;
  isClosed: boolean;
  /** Set when `onclose` has run: nothing is delivered after it. */
  notified: boolean;
  shutDown(reason: GatewayError | undefined): void;
}

function createSide(): Side {
  const side: Side = {
    peer: undefined,
    isClosed: false,
    notified: false,
    shutDown(reason) {
      if (side.isClosed) return;
      side.isClosed = true;
      // Queued behind any message already in flight, so the receiver sees them first.
      queueMicrotask(() => {
        side.notified = true;
        transport.onclose?.(reason);
      });
    },
    transport: undefined as unknown as MemoryTransport,
  };

  function closeBoth(peerReason: GatewayError): void {
    if (side.isClosed) return;
    side.shutDown(undefined);
    side.peer?.shutDown(peerReason);
  }

  const transport: MemoryTransport = {
    get closed() {
      return side.isClosed;
    },
    start: () => (side.isClosed ? Promise.reject(closedError()) : Promise.resolve()),
    send(message: JsonRpcMessage) {
      if (side.isClosed) return Promise.reject(closedError());
      // Serialised now, as a real wire would, so later mutation by the sender cannot leak across.
      const text = JSON.stringify(message);
      const peer = side.peer;
      queueMicrotask(() => {
        if (peer === undefined || peer.notified) return;
        peer.transport.onmessage?.(parseJson(text) as JsonRpcMessage);
      });
      return Promise.resolve();
    },
    close() {
      closeBoth(closedError());
      return Promise.resolve();
    },
    fail(reason) {
      closeBoth(reason);
    },
  };
  side.transport = transport;
  return side;
}

function closedError(): GatewayError {
  return new GatewayError('GW_UPSTREAM_CLOSED', 'In-memory peer closed the connection');
}
