/**
 * Caps on open downstream connections, in all and per client address. A connection over a cap is
 * destroyed as it is accepted, before any byte of HTTP is read: refusing it later would let it hold
 * a descriptor (and parser state) for as long as it cares to stay. One warning a minute at most,
 * with the count of connections refused meanwhile, so a flood cannot flood the log.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log/logger.ts';

export interface ConnectionLimits {
  maxConnections: number;
  /** 0: no per-address cap. */
  maxConnectionsPerAddress: number;
}

const WARN_INTERVAL_MS = 60_000;

/** Counts connections on `server` and destroys those over a cap. Returns the live count, for tests. */
export function limitConnections(server: Server, limits: ConnectionLimits, logger: Logger): () => number {
  const perAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;
  let lastWarning = 0;

  const refuse = (socket: Socket, why: string, address: string) => {
    socket.destroy();
    refused += 1;
    const now = Date.now();
    if (now - lastWarning < WARN_INTERVAL_MS) return;
    lastWarning = now;
    logger.warn({ why, address, refused, open }, 'downstream connection refused: over the connection cap');
    refused = 0;
  };

  // Before the HTTP server's own listener, so a refused socket never gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    if (open >= limits.maxConnections) return refuse(socket, 'maxConnections', address);
    const mine = perAddress.get(address) ?? 0;
    if (limits.maxConnectionsPerAddress > 0 && mine >= limits.maxConnectionsPerAddress) {
      return refuse(socket, 'maxConnectionsPerAddress', address);
    }
    open += 1;
    perAddress.set(address, mine + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return () => open;
}
