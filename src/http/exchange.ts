/**
 * The Exchange of a 2026 request (session/stateless/exchange.ts) over a raw Node response: the
 * same writer as a 2025 stream (sink.ts: keep-alive comments, the cap on what a slow reader may
 * leave buffered), with no session header and the status the answer calls for.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from '../session/stateless/exchange.ts';
import { createHttpSink, type KeepAlive, writeJson } from './sink.ts';

export function createExchange(raw: ServerResponse, keepAlive: KeepAlive): Exchange {
  const sink = createHttpSink(raw, undefined, keepAlive);
  let answered = false;
  const exchange: Exchange = {
    onclose: undefined,
    get closed() {
      return answered || sink.closed;
    },
    json(status, body, headers) {
      if (answered || sink.closed) return;
      answered = true;
      writeJson(raw, status, body, headers);
    },
    sse: () => sink.sse(),
    event: (data) => sink.event('', data),
    end: () => sink.end(),
  };
  sink.onclose = () => exchange.onclose?.();
  return exchange;
}
