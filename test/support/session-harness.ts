/**
 * Sessions built exactly as the gateway builds them (endpoint table + session store), over
 * in-memory upstreams (memory-upstream.ts), with response sinks that record what the client
 * would receive. For unit tests of the session core on both flavours.
 */
import { createLogger } from '../../src/log/logger.ts';
import { createEndpointTable } from '../../src/session/endpoint-table.ts';
import type { ResponseSink } from '../../src/session/streams.ts';
import { createSessionServices } from '../../src/session/services.ts';
import { createSessionStore } from '../../src/session/store.ts';
import { buildAggregateConfig, type AggregateTarget } from './aggregate.ts';
import { memoryUpstreams } from './memory-upstream.ts';

export type Received = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

export interface RecordingSink extends ResponseSink {
  readonly received: Received[];
  /** Resolves with the first received message (past or future) that matches. */
  next(predicate: (message: Received) => boolean): Promise<Received>;
  /** The client goes away (the connection drops). */
  drop(): void;
}

export function recordingSink(): RecordingSink {
  const received: Received[] = [];
  const waiters: Array<{ predicate: (m: Received) => boolean; resolve: (m: Received) => void }> = [];
  let closed = false;
  const push = (text: string) => {
    const parsed = JSON.parse(text) as Received | Received[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      received.push(m);
      for (const w of [...waiters]) {
        if (!w.predicate(m)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  const sink: RecordingSink = {
    received,
    onclose: undefined,
    get closed() {
      return closed;
    },
    json(body) {
      push(body);
      closed = true;
    },
    sse: () => undefined,
    event(_id, data) {
      if (data !== '') push(data);
    },
    end() {
      closed = true;
    },
    next(predicate) {
      const found = received.find(predicate);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    drop() {
      closed = true;
      sink.onclose?.();
    },
  };
  return sink;
}

/** A target the memory factory serves (the command is never run). */
export const memoryTarget = (exposure?: AggregateTarget['exposure']): AggregateTarget => ({ command: 'never-run', ...(exposure ? { exposure } : {}) });

export function harness(targets: Record<string, AggregateTarget>) {
  const config = buildAggregateConfig({ targets });
  const upstreams = memoryUpstreams();
  const store = createSessionStore({ config, logger: createLogger({ level: 'silent' }), services: createSessionServices(config.limits, { open: upstreams.open }) });
  const table = createEndpointTable(config);
  return { config, upstreams, store, table };
}

/** A JSON-RPC request. */
export const request = (id: string | number, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0' as const, id, method, params });

/** A tools/call request. */
export const call = (id: string | number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) =>
  request(id, 'tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) });

export const byId = (id: unknown) => (m: Received) => m.id === id && m.method === undefined;
