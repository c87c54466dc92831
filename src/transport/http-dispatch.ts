/**
 * One HTTP exchange on undici's `dispatch` with a handler of our own, for the POSTs of the
 * Streamable HTTP wire: the hot path of a remote target (one per message).
 *
 * `request()` wraps every response in a Node Readable, an async iterator over it and a promise per
 * chunk, and listens on an AbortSignal per request; profiles of the gateway at 32 calls in flight
 * showed that machinery (and the garbage it leaves) as a large share of the upstream's cost. Here
 * the body's plan is chosen once its head is known: a JSON answer is collected as Buffers (bounded),
 * an SSE answer is pushed chunk by chunk to its parser as it arrives (no buffering), and anything
 * else is kept only as far as an error message needs.
 */
import type { Dispatcher } from 'undici';

/** What the transport needs of a response's head. */
export interface ResponseHead {
  readonly statusCode: number;
  /** Media type, lower-cased, without parameters ('' when absent). */
  readonly contentType: string;
  /** `Mcp-Session-Id` (the first when repeated). */
  readonly sessionId: string | undefined;
  /** `WWW-Authenticate` of a 401 or 403 (an upstream's OAuth challenge: RFC 6750 section 3); undefined otherwise. */
  readonly challenge?: string | undefined;
}

/**
 * What to do with the body, chosen from the head:
 * - `collect`: keep it all, up to `limit` bytes; past it the response is aborted (`overflow`).
 * - `head`: keep the first `limit` bytes (an error's message); the rest is read and thrown away up
 *   to 64 KiB, so the connection stays reusable, and past that the response is aborted.
 * - `stream`: every chunk goes to `onchunk` as it arrives; a connection broken mid-body ends it
 *   with `broken` instead of an error (the caller may resume the stream).
 */
export type BodyPlan =
  | { readonly mode: 'collect'; readonly limit: number }
  | { readonly mode: 'head'; readonly limit: number }
  | { readonly mode: 'stream'; readonly onchunk: (chunk: Buffer) => void };

export interface DispatchedResponse extends ResponseHead {
  /** The collected text (`collect`, `head`); '' for `stream`. */
  readonly text: string;
  /** `collect` only: the body was larger than its limit and was not read to its end. */
  readonly overflow: boolean;
  /** `stream` only: the connection broke before the body ended. */
  readonly broken: boolean;
  /** `stream` only: at least one chunk arrived. */
  readonly streamed: boolean;
}

/**
 * Aborting one exchange, without an AbortController per message: adding and removing a listener on
 * an AbortSignal for every POST showed in profiles. A real signal is made only when something
 * needs one (an SSE answer that may be resumed, waiting out a delay).
 */
export interface AbortHandle {
  readonly aborted: boolean;
  abort(): void;
  /** The exchange's signal, made on first use (aborted already if the handle is). */
  readonly signal: AbortSignal;
  /** Called once on abort; dispatchExchange's hook into the request in flight. */
  onabort: (() => void) | undefined;
}

export function createAbortHandle(): AbortHandle {
  let controller: AbortController | undefined;
  let aborted = false;
  const handle: AbortHandle = {
    onabort: undefined,
    get aborted() {
      return aborted;
    },
    abort() {
      if (aborted) return;
      aborted = true;
      controller?.abort();
      const hook = handle.onabort;
      handle.onabort = undefined;
      hook?.();
    },
    get signal() {
      controller ??= new AbortController();
      if (aborted) controller.abort();
      return controller.signal;
    },
  };
  return handle;
}

export interface DispatchOptions {
  readonly origin: string;
  readonly path: string;
  readonly method: 'POST';
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly abort: AbortHandle;
  readonly plan: (head: ResponseHead) => BodyPlan;
}

/** How much of a body nobody needs is read before the connection is given up instead. */
const DISCARD_BYTES = 64 * 1024;

const abortedError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });

/** The first value of `name` (lower-case, ASCII) among undici's raw header pairs. */
function rawHeader(raw: Buffer[] | string[] | null, name: string): string | undefined {
  if (raw === null) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length !== name.length) continue;
    if (key.toString('latin1').toLowerCase() === name) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
}

/**
 * Sends one request and settles once its body has been dealt with as the plan says. Rejects with
 * undici's error when the request fails before a response (or `collect` breaks mid-body), and with
 * an AbortError when its handle aborts it.
 */
export function dispatchExchange(agent: Dispatcher, options: DispatchOptions): Promise<DispatchedResponse> {
  const handle = options.abort;
  if (handle.aborted) return Promise.reject(abortedError());
  return new Promise((resolve, reject) => {
    const handler = new ExchangeHandler(options, resolve, reject);
    handle.onabort = handler.cancel;
    agent.dispatch({ origin: options.origin, path: options.path, method: options.method, headers: options.headers, body: options.body }, handler);
  });
}

/** One exchange's state as undici reports it (undici calls these as methods of the handler). */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  readonly options: DispatchOptions;
  readonly handle: AbortHandle;
  readonly resolve: (response: DispatchedResponse) => void;
  readonly reject: (err: Error) => void;
  abort: ((reason?: Error) => void) | undefined = undefined;
  head: ResponseHead | undefined = undefined;
  plan: BodyPlan | undefined = undefined;
  chunks: Buffer[] = [];
  size = 0;
  overflow = false;
  streamed = false;
  settled = false;

  constructor(options: DispatchOptions, resolve: (response: DispatchedResponse) => void, reject: (err: Error) => void) {
    this.options = options;
    this.handle = options.abort;
    this.resolve = resolve;
    this.reject = reject;
  }

  /** An arrow field: the handle calls it detached when its owner aborts. */
  readonly cancel = (): void => this.abort?.(abortedError());

  onConnect(fn: (reason?: Error) => void): void {
    this.abort = fn;
    if (this.handle.aborted) fn(abortedError());
  }

  onHeaders(statusCode: number, raw: Buffer[] | string[] | null): boolean {
    const type = rawHeader(raw, 'content-type') ?? '';
    let head: ResponseHead = { statusCode, contentType: type.split(';', 1)[0]!.trim().toLowerCase(), sessionId: rawHeader(raw, 'mcp-session-id') };
    if (statusCode === 401 || statusCode === 403) head = { ...head, challenge: rawHeader(raw, 'www-authenticate') };
    this.head = head;
    this.plan = this.options.plan(head);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const p = this.plan!;
    if (p.mode === 'stream') {
      this.streamed = true;
      p.onchunk(chunk);
      return true;
    }
    const size = (this.size += chunk.length);
    if (p.mode === 'collect') {
      if (size > p.limit) {
        this.overflow = true;
        return this.stop();
      }
      this.chunks.push(chunk);
      return true;
    }
    const kept = size - chunk.length;
    if (kept < p.limit) this.chunks.push(kept + chunk.length > p.limit ? chunk.subarray(0, p.limit - kept) : chunk);
    if (size > DISCARD_BYTES) return this.stop();
    return true;
  }

  onComplete(): void {
    this.finish(false);
  }

  onError(err: Error): void {
    // After the head, a broken body is an answer cut short, not a failed request (except
    // for `collect`, where half a JSON body is worth nothing).
    const plan = this.plan;
    if (this.head !== undefined && plan !== undefined && plan.mode !== 'collect') this.finish(plan.mode === 'stream');
    else this.fail(this.handle.aborted ? abortedError() : err);
  }

  /** Settles with what was read so far and aborts the rest of the body. */
  private stop(): false {
    this.finish(false);
    this.abort?.(abortedError());
    return false;
  }

  private finish(broken: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.handle.onabort = undefined;
    const chunks = this.chunks;
    const text = chunks.length === 0 ? '' : chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    this.chunks = [];
    const h = this.head!;
    const { overflow, streamed } = this;
    this.resolve({ statusCode: h.statusCode, contentType: h.contentType, sessionId: h.sessionId, challenge: h.challenge, text, overflow, broken, streamed });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.handle.onabort = undefined;
    this.reject(err);
  }
}
