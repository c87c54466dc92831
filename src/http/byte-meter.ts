/**
 * Bytes in and out of downstream connections, for the metrics: read from each socket's own
 * counters (`bytesRead`, `bytesWritten`) when it closes, and for live sockets when someone asks
 * (a scrape), so nothing is counted per message. Sockets are tracked only while open: the map is
 * bounded by limits.maxConnections.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Observer } from '../log/observer.ts';

/** Reports what live sockets moved since their last report (call before reading the metrics). */
export type FlushBytes = () => void;

export function meterBytes(server: Server, observer: Observer): FlushBytes {
  if (!observer.observing) return () => undefined;
  /** Per live socket: [read, written] already reported. */
  const live = new Map<Socket, [number, number]>();
  const report = (socket: Socket, seen: [number, number]) => {
    const read = socket.bytesRead - seen[0];
    const written = socket.bytesWritten - seen[1];
    if (read === 0 && written === 0) return;
    seen[0] += read;
    seen[1] += written;
    observer.bytes(read, written);
  };
  server.on('connection', (socket: Socket) => {
    const seen: [number, number] = [0, 0];
    live.set(socket, seen);
    socket.once('close', () => {
      live.delete(socket);
      report(socket, seen);
    });
  });
  return () => {
    for (const [socket, seen] of live) report(socket, seen);
  };
}
