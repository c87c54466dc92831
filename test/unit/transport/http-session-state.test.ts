import { describe, expect, it } from 'vitest';
import { createHttpSessionState, isStateBearing } from '../../../src/transport/http-session-state.ts';

const request = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0' as const, id: 1, method, ...(params ? { params } : {}) });

describe('upstream session state (Streamable HTTP)', () => {
  it('counts subscriptions, the log level and tasks as state a new session would lose', () => {
    expect(isStateBearing(request('resources/subscribe', { uri: 'x' }))).toBe(true);
    expect(isStateBearing(request('logging/setLevel', { level: 'debug' }))).toBe(true);
    expect(isStateBearing(request('tasks/get', { taskId: 't' }))).toBe(true);
    expect(isStateBearing(request('tools/call', { name: 'x', task: { ttl: 1000 } }))).toBe(true);
    expect(isStateBearing(request('tools/call', { name: 'x' }))).toBe(false);
    expect(isStateBearing(request('resources/read', { uri: 'x' }))).toBe(false);
  });

  it('is replayable after initialize until a state-bearing request, and replays the client initialize', () => {
    const state = createHttpSessionState();
    expect(state.replayable).toBe(false);
    state.sent({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-11-25', clientInfo: { name: 'c' } } });
    state.sent(request('tools/list'));
    expect(state.replayable).toBe(true);
    expect(JSON.parse(state.replay('again'))).toEqual({
      jsonrpc: '2.0',
      id: 'again',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', clientInfo: { name: 'c' } },
    });
    state.sent(request('logging/setLevel', { level: 'info' }));
    expect(state.stateful).toBe(true);
    expect(state.replayable).toBe(false);
  });

  it('learns the version from the answer to initialize only, and sends it with the session id', () => {
    const state = createHttpSessionState();
    state.sent({ jsonrpc: '2.0', id: 7, method: 'initialize', params: {} });
    state.received({ jsonrpc: '2.0', id: 8, result: { protocolVersion: 'not-this' } });
    expect(state.protocolVersion).toBeUndefined();
    state.received({ jsonrpc: '2.0', id: 7, result: { protocolVersion: '2025-06-18' } });
    state.sessionId = 'abc';
    expect(state.headers({ 'x-api-key': 'k' }, { accept: 'text/event-stream' })).toEqual({
      'x-api-key': 'k',
      accept: 'text/event-stream',
      'mcp-session-id': 'abc',
      'mcp-protocol-version': '2025-06-18',
    });
  });
});
