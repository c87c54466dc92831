import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import { createChannel, isRejected, parseOneMessage } from '../../../src/http/channel.ts';
import type { JsonRpcMessage, JsonRpcRequest } from '../../../src/jsonrpc/types.ts';
import type { Session } from '../../../src/session/session.ts';
import { createTestLogger } from '../../support/gateway.ts';
import { pickSubprotocol } from '../../../src/http/ws-route.ts';

describe('parseOneMessage (one WebSocket frame, one legacy POST body)', () => {
  it('takes one request, notification or response', () => {
    expect(parseOneMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(isRejected(parseOneMessage('{"jsonrpc":"2.0","method":"notifications/initialized"}'))).toBe(false);
    expect(isRejected(parseOneMessage('{"jsonrpc":"2.0","id":"a","result":{}}'))).toBe(false);
  });

  it('rejects bad JSON as GW_PARSE_ERROR with id null', () => {
    const result = parseOneMessage('{"jsonrpc":');
    expect(isRejected(result) && result.rejected.code).toBe('GW_PARSE_ERROR');
    expect(isRejected(result) && result.id).toBe(null);
  });

  it('rejects an invalid envelope as GW_INVALID_REQUEST, keeping a readable id', () => {
    const result = parseOneMessage('{"jsonrpc":"1.0","id":"x","method":"ping"}');
    expect(isRejected(result) && result.rejected.code).toBe('GW_INVALID_REQUEST');
    expect(isRejected(result) && result.id).toBe('x');
    const noId = parseOneMessage('{"jsonrpc":"2.0","id":{},"method":"ping"}');
    expect(isRejected(noId) && noId.id).toBe(null);
  });

  it('rejects batches: one frame carries one message', () => {
    const result = parseOneMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    expect(isRejected(result) && result.rejected.message).toMatch(/batches/);
  });
});

describe('pickSubprotocol', () => {
  it('echoes mcp when offered, picks none otherwise', () => {
    expect(pickSubprotocol(new Set(['other', 'mcp']))).toBe('mcp');
    expect(pickSubprotocol(new Set(['other']))).toBe(false);
    expect(pickSubprotocol(new Set())).toBe(false);
  });
});

describe('createChannel with a shared rate limit (a take that answers later)', () => {
  it('keeps the client order: what arrives behind a pending take waits for it; a refusal answers and the rest goes on', async () => {
    const seen: string[] = [];
    const sent: string[] = [];
    const session = {
      id: 's1',
      lastActivity: 0,
      openStream: () => true,
      initialize: async (request: JsonRpcRequest) => ({ jsonrpc: '2.0', id: request.id, result: {} }),
      admit: () => undefined,
      serve: (requests: JsonRpcRequest[]) => seen.push(`serve ${String(requests[0]?.id)}`),
      handleResponse: async () => undefined,
      handleNotification: async (n: { method: string }) => void seen.push(`notify ${n.method}`),
    } as unknown as Session;
    const wire = { send: (data: string) => void sent.push(data), closed: false, close: () => undefined };
    const pending = new Map<unknown, { resolve: () => void; reject: (err: unknown) => void }>();
    const limit = (message: JsonRpcMessage) => {
      const id = (message as JsonRpcRequest).id;
      if (id !== 1 && id !== 3) return undefined;
      return new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
    };
    const channel = createChannel(session, wire, createTestLogger('silent', undefined), limit);
    await channel.receive({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} });
    const done = [
      channel.receive({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } }),
      channel.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
      channel.receive({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      channel.receive({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      channel.receive({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    pending.get(1)?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['serve 1', 'notify notifications/cancelled', 'serve 2']);
    pending.get(3)?.reject(new GatewayError('GW_RATE_LIMIT_UNAVAILABLE', undefined, { retryAfterSec: 1 }));
    await Promise.all(done);
    expect(seen).toEqual(['serve 1', 'notify notifications/cancelled', 'serve 2', 'serve 4']);
    expect(JSON.parse(sent.at(-1) as string)).toMatchObject({ id: 3, error: { data: { code: 'GW_RATE_LIMIT_UNAVAILABLE' } } });
  });
});
