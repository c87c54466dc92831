/**
 * A raw client of the legacy HTTP+SSE transport (2024-11-05): opens the GET stream with fetch,
 * reads its events, and knows the POST endpoint it announced. For tests that must see statuses
 * and exact events the SDK's SSEClientTransport hides (or reconnects past).
 */

export interface SseEvent {
  event: string;
  data: string;
}

export interface LegacyStream {
  /** Absolute URL from the `endpoint` event. */
  endpoint: URL;
  sessionId: string;
  status: number;
  /** The next event (skipping comments); rejects when the stream ends first. */
  next(): Promise<SseEvent>;
  /** The next `message` event's JSON. */
  nextMessage(): Promise<Record<string, unknown>>;
  /** SSE comments (keep-alives) seen so far. */
  readonly comments: number;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** POSTs one message to the endpoint; returns the status. */
  post(message: unknown): Promise<number>;
  close(): void;
}

export async function openLegacyStream(url: URL, headers: Record<string, string> = {}): Promise<LegacyStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (res.status !== 200 || res.body === null) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const queue: SseEvent[] = [];
  const waiters: Array<{ resolve: (e: SseEvent) => void; reject: (err: Error) => void }> = [];
  let buffer = '';
  let done = false;
  let comments = 0;
  let markEnded!: () => void;
  const ended = new Promise<void>((resolve) => (markEnded = resolve));

  const push = (event: SseEvent) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(event);
    else queue.push(event);
  };
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += chunk.value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) push({ event, data: data.join('\n') });
          else if (block.startsWith(':')) comments++;
        }
      }
    } catch {
      // aborted by close()
    }
    done = true;
    markEnded();
    for (const waiter of waiters.splice(0)) waiter.reject(new Error('stream ended'));
  })();

  const next = (): Promise<SseEvent> => {
    const event = queue.shift();
    if (event) return Promise.resolve(event);
    if (done) return Promise.reject(new Error('stream ended'));
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  };

  const first = await next();
  if (first.event !== 'endpoint') throw new Error(`first event was ${first.event}, not endpoint`);
  const endpoint = new URL(first.data, url);
  return {
    endpoint,
    sessionId: endpoint.searchParams.get('sessionId') ?? '',
    status: res.status,
    next,
    async nextMessage() {
      for (;;) {
        const event = await next();
        if (event.event === 'message') return JSON.parse(event.data) as Record<string, unknown>;
      }
    },
    get comments() {
      return comments;
    },
    ended,
    async post(message) {
      // The stream's credential goes along, as a real client sends it.
      const auth = headers.authorization === undefined ? {} : { authorization: headers.authorization };
      const answer = await fetch(endpoint, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(message) });
      await answer.arrayBuffer();
      return answer.status;
    },
    close: () => controller.abort(),
  };
}
