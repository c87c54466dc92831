import { describe, expect, it } from 'vitest';
import { PendingSend } from '../../../src/upstream/correlator-pending.ts';

// The send options of one request make their AbortController only when a transport reads the
// signal (issue 34): what a transport sees must be what an eager controller would have shown it.
describe('PendingSend', () => {
  it('carries the headers and trace it was made with', () => {
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const send = new PendingSend({ 'mcp-param-x': '1' }, trace);
    expect(send.headers).toEqual({ 'mcp-param-x': '1' });
    expect(send.trace).toBe(trace);
    expect(new PendingSend(undefined, undefined).headers).toBeUndefined();
  });

  it('a signal read before the abort fires its abort event, once, and stays the same signal', () => {
    const send = new PendingSend(undefined, undefined);
    const signal = send.signal;
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    expect(signal.aborted).toBe(false);
    expect(send.signal).toBe(signal);
    send.abort();
    send.abort();
    expect(signal.aborted).toBe(true);
    expect(fired).toBe(1);
  });

  it('a signal first read after the abort is already aborted', () => {
    const send = new PendingSend(undefined, undefined);
    send.abort();
    expect(send.signal.aborted).toBe(true);
  });
});
