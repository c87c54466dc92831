/**
 * A plain WebSocket client (Node's global WebSocket) that queues text frames as JSON, for tests that
 * must see exact frames and close codes the SDK client hides.
 */

export interface WsPeer {
  socket: WebSocket;
  /** The next frame, parsed; rejects if the socket closes first. */
  next(): Promise<Record<string, unknown>>;
  /** Frames until one answers `id` (that one included). */
  until(id: unknown): Promise<Array<Record<string, unknown>>>;
  send(message: unknown): void;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
}

export function wsUrl(base: string, path: string): URL {
  return new URL(path, base.replace(/^http/, 'ws'));
}

export async function openWs(url: URL, protocols: string | string[] = 'mcp'): Promise<WsPeer> {
  const socket = new WebSocket(url, protocols);
  const queue: Array<Record<string, unknown>> = [];
  const waiters: Array<{ resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }> = [];
  let closeInfo: { code: number; reason: string } | undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.addEventListener('close', (event) => {
      closeInfo = { code: event.code, reason: event.reason };
      for (const w of waiters.splice(0)) w.reject(new Error(`closed ${event.code} ${event.reason}`));
      resolve(closeInfo);
    });
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as Record<string, unknown>;
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(message);
    else queue.push(message);
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`could not open ${url}`)), { once: true });
  });
  const next = (): Promise<Record<string, unknown>> => {
    const message = queue.shift();
    if (message) return Promise.resolve(message);
    if (closeInfo) return Promise.reject(new Error(`closed ${closeInfo.code}`));
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  };
  return {
    socket,
    next,
    async until(id) {
      const seen: Array<Record<string, unknown>> = [];
      for (;;) {
        const message = await next();
        seen.push(message);
        if (message.id === id && message.method === undefined) return seen;
      }
    },
    send: (message) => socket.send(JSON.stringify(message)),
    closed,
  };
}

/** initialize + notifications/initialized over a WsPeer; returns the initialize answer. */
export async function initializeWs(peer: WsPeer, protocolVersion = '2025-11-25'): Promise<Record<string, unknown>> {
  peer.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-ws', version: '1' } } });
  const [answer] = (await peer.until('init')).slice(-1);
  peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return answer as Record<string, unknown>;
}
