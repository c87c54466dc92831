/**
 * Valid messages the mutator starts from, as seed lists: one list per protocol era and
 * direction. A list is a function of the context (the tool names the endpoint serves, an id
 * counter) so that every seed is valid as sent. The 2026-07-28 stateless era is one more
 * `SeedList` with `era: '2026'` (per-request `_meta`, no session), added to `SEED_LISTS`; the
 * targets then send its cases without a session header.
 */
import type { Rng } from './prng.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SeedContext {
  rng: Rng;
  /** A fresh request id (a number or a string). */
  id(): Json;
  /** The endpoint's echo tool and its slow tool (which sends progress), as named there. */
  tools: { echo: string; slow: string };
}

export interface SeedList {
  name: string;
  era: '2025' | '2026';
  /** Messages a client sends on a live session. */
  messages(ctx: SeedContext): JsonObject[];
}

const call = (ctx: SeedContext, name: string, args: JsonObject, meta?: JsonObject): JsonObject => ({
  jsonrpc: '2.0',
  id: ctx.id(),
  method: 'tools/call',
  params: meta ? { name, arguments: args, _meta: meta } : { name, arguments: args },
});

/** The 2025 era (2025-03-26 ... 2025-11-25): a session opened by initialize. */
export const CLIENT_2025: SeedList = {
  name: 'client-2025',
  era: '2025',
  messages: (ctx) => [
    {
      jsonrpc: '2.0',
      id: ctx.id(),
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'fuzz', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/list' },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/list', params: { cursor: 'abc' } },
    call(ctx, ctx.tools.echo, { text: 'hello' }),
    call(ctx, ctx.tools.echo, { text: 'päivää \u{1F600}' }),
    call(ctx, ctx.tools.slow, { ms: ctx.rng.range(0, 40), steps: 2 }, { progressToken: `p-${ctx.rng.int(4)}` }),
    { jsonrpc: '2.0', id: ctx.id(), method: 'ping' },
    { jsonrpc: '2.0', id: ctx.id(), method: 'resources/list' },
    { jsonrpc: '2.0', id: ctx.id(), method: 'prompts/list' },
    { jsonrpc: '2.0', id: ctx.id(), method: 'logging/setLevel', params: { level: 'debug' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: ctx.id(), reason: 'fuzz' } },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: `p-${ctx.rng.int(4)}`, progress: 1, total: 2 } },
    { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    // Answers to server->client requests the gateway never sent (answers to nothing).
    { jsonrpc: '2.0', id: ctx.id(), result: { roots: [] } },
    { jsonrpc: '2.0', id: ctx.id(), error: { code: -32601, message: 'no' } },
  ],
};

/** The per-request envelope of the stateless revision, with the client's declared capabilities. */
const envelope = (ctx: SeedContext, extra: JsonObject = {}): JsonObject => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': ctx.rng.pick([{}, { sampling: {} }, { elicitation: {}, roots: {} }]),
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
  ...extra,
});

/**
 * The 2026-07-28 era: every request carries its envelope, no session. No subscriptions/listen: its
 * answer is a stream that stays open by design, which a case cannot wait for.
 */
export const CLIENT_2026: SeedList = {
  name: 'client-2026',
  era: '2026',
  messages: (ctx) => [
    { jsonrpc: '2.0', id: ctx.id(), method: 'server/discover', params: { _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/list', params: { _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/call', params: { name: ctx.tools.echo, arguments: { text: 'hello' }, _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/call', params: { name: ctx.tools.slow, arguments: { ms: ctx.rng.range(0, 40), steps: 2 }, _meta: envelope(ctx, { progressToken: `p-${ctx.rng.int(4)}`, 'io.modelcontextprotocol/logLevel': 'debug' }) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'tools/call', params: { name: ctx.tools.echo, arguments: { text: 'x' }, inputResponses: { 'sampling-1': { role: 'assistant' } }, requestState: 'AAAA', _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'resources/list', params: { _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'prompts/list', params: { _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'ping', params: { _meta: envelope(ctx) } },
    { jsonrpc: '2.0', id: ctx.id(), method: 'initialize', params: { protocolVersion: '2026-07-28', _meta: envelope(ctx) } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: ctx.id(), _meta: envelope(ctx) } },
  ],
};

/** Lists the campaign draws client messages from: both eras. */
export const SEED_LISTS: readonly SeedList[] = [CLIENT_2025, CLIENT_2026];

/**
 * Lines a stdio upstream writes in answer to one request: `$ID` stands for that request's id (its
 * JSON text). The mutator turns them into garbage, partial lines, wrong ids and so on.
 */
export function upstreamLines(rng: Rng): JsonObject[] {
  const id = '$ID';
  return [
    { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'fuzzed answer' }] } },
    { jsonrpc: '2.0', id, error: { code: -32000, message: 'upstream says no', data: { x: 1 } } },
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'fuzz', data: 'a log line' } },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: `t-${rng.int(3)}`, progress: rng.int(10) } },
    { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: rng.int(5), reason: 'upstream cancels' } },
    { jsonrpc: '2.0', id: `srv-${rng.int(1000)}`, method: 'ping' },
    { jsonrpc: '2.0', id: rng.int(1000), method: 'roots/list' },
    { jsonrpc: '2.0', id: rng.int(1000), result: {} },
  ];
}
