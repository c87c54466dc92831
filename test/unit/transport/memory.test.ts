import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.ts';
import type { JsonRpcMessage } from '../../../src/jsonrpc/types.ts';
import { createMemoryTransportPair } from '../../../src/transport/memory.ts';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createMemoryTransportPair', () => {
  it('delivers both ways, asynchronously and in order', async () => {
    const [a, b] = createMemoryTransportPair();
    const atB: JsonRpcMessage[] = [];
    const atA: JsonRpcMessage[] = [];
    b.onmessage = (m) => atB.push(m);
    a.onmessage = (m) => atA.push(m);
    await Promise.all([a.start(), b.start()]);
    void a.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    void a.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(atB).toEqual([]); // never synchronously inside send
    await b.send({ jsonrpc: '2.0', id: 1, result: {} });
    await flush();
    expect(atB).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    expect(atA).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
  });

  it('copies messages, so mutation after send does not reach the peer', async () => {
    const [a, b] = createMemoryTransportPair();
    const got: JsonRpcMessage[] = [];
    b.onmessage = (m) => got.push(m);
    const params = { name: 'before' };
    const sent: JsonRpcMessage = { jsonrpc: '2.0', id: 2, method: 'tools/call', params };
    await a.send(sent);
    params.name = 'after';
    await flush();
    expect(got[0]).toEqual({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'before' } });
    expect(got[0]).not.toBe(sent);
  });

  it('keeps the exact text of a big integer id', async () => {
    const [a, b] = createMemoryTransportPair();
    const got: JsonRpcMessage[] = [];
    b.onmessage = (m) => got.push(m);
    const big = (JSON as unknown as { rawJSON(t: string): { rawJSON: string } }).rawJSON('12345678901234567890');
    await a.send({ jsonrpc: '2.0', id: big, method: 'ping' });
    await flush();
    expect(JSON.stringify(got[0])).toBe('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}');
  });

  it('close propagates: own onclose without reason, peer gets GW_UPSTREAM_CLOSED after earlier messages', async () => {
    const [a, b] = createMemoryTransportPair();
    const events: string[] = [];
    let peerReason: GatewayError | undefined;
    let ownReason: GatewayError | undefined | 'unset' = 'unset';
    a.onclose = (r) => {
      ownReason = r;
      events.push('a closed');
    };
    b.onmessage = () => events.push('b message');
    b.onclose = (r) => {
      peerReason = r;
      events.push('b closed');
    };
    void a.send({ jsonrpc: '2.0', method: 'notifications/last' });
    await a.close();
    await a.close(); // idempotent
    await flush();
    expect(events).toEqual(['b message', 'a closed', 'b closed']);
    expect(ownReason).toBeUndefined();
    expect(peerReason?.code).toBe('GW_UPSTREAM_CLOSED');
    expect(a.closed && b.closed).toBe(true);
    await expect(b.send({ jsonrpc: '2.0', method: 'x' })).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
    await expect(a.send({ jsonrpc: '2.0', method: 'x' })).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
  });

  it('fail() hands its reason to the peer, as a crash would', async () => {
    const [a, b] = createMemoryTransportPair();
    const reasons: (string | undefined)[] = [];
    a.onclose = (r) => reasons.push(`a:${r?.code}`);
    b.onclose = (r) => reasons.push(`b:${r?.code}`);
    b.fail(new GatewayError('GW_UPSTREAM_EXITED', 'boom', { exitCode: 1 }));
    b.fail(new GatewayError('GW_UPSTREAM_EXITED', 'again'));
    await flush();
    expect(reasons).toEqual(['b:undefined', 'a:GW_UPSTREAM_EXITED']);
  });
});
