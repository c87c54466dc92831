import { describe, expect, it } from 'vitest';
import { isRejected, parseOneMessage } from '../../../src/http/channel.ts';
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
