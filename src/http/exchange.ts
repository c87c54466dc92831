/**
 * The Exchange of a 2026 request (session/stateless/exchange.ts) over a raw Node response, with no
 * session header and the status the answer calls for. Most 2026 answers are one JSON body: that
 * costs one object and one 'close' listener. The SSE writer (sink.ts: keep-alive comments, the cap
 * on what a slow reader may leave buffered) is made only when the answer turns into a stream
 * (issue 34: the 2026 path's per-request objects).
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../session/stateless/exchange.ts';
import { createHttpSink, type HttpSink, type KeepAlive, writeJson } from './sink.ts';

class HttpExchange implements Exchange {
  onclose: (() => void) | undefined = undefined;
  readonly #raw: ServerResponse;
  readonly #keepAlive: KeepAlive;
  /** The SSE writer, once the answer is a stream. */
  #stream: HttpSink | undefined = undefined;
  /** Answered, ended, or the client went away: nothing more is written, `onclose` has had its one call. */
  #done = false;
  /** The client went away before the response ended: `onclose`, once. */
  readonly #gone = () => {
    if (this.#done) return;
    this.#done = true;
    this.onclose?.();
  };

  constructor(raw: ServerResponse, keepAlive: KeepAlive) {
    this.#raw = raw;
    this.#keepAlive = keepAlive;
    raw.on('close', this.#gone);
  }

  get closed(): boolean {
    return this.#done || this.#raw.destroyed || (this.#stream?.closed ?? false);
  }

  json(status: number, body: string, headers?: Record<string, string>): void {
    if (this.closed) return;
    this.#done = true;
    writeJson(this.#raw, status, body, headers);
  }

  sse(): void {
    if (this.#done) return;
    this.#streamOf().sse();
  }

  event(data: string): void {
    if (this.#done) return;
    this.#streamOf().event('', data);
  }

  end(): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#stream !== undefined) this.#stream.end();
    else this.#raw.end();
  }

  #streamOf(): HttpSink {
    if (this.#stream === undefined) {
      this.#stream = createHttpSink(this.#raw, undefined, this.#keepAlive);
      // A reader too slow for the buffer cap: the writer drops the connection and says so here.
      this.#stream.onclose = this.#gone;
    }
    return this.#stream;
  }
}

export function createExchange(raw: ServerResponse, keepAlive: KeepAlive): Exchange {
  return new HttpExchange(raw, keepAlive);
}
