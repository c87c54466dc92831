/** The `_meta` side of trace propagation: set in place, nothing else of the request touched. */
import { describe, expect, it } from 'vitest';
import { setTraceMeta } from '../../../src/jsonrpc/trace-context.ts';
import type { JsonRpcRequest } from '../../../src/jsonrpc/types.ts';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('setTraceMeta', () => {
  it('adds params and _meta to a request that has neither', () => {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    setTraceMeta(request, { traceparent: TP });
    expect(request).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { traceparent: TP } } });
  });

  it('keeps every other _meta key and param, and replaces the client context with ours', () => {
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 'a',
      method: 'tools/call',
      params: { name: 'echo', arguments: { x: 1 }, _meta: { progressToken: 7, traceparent: 'old', tracestate: 'old=1', 'vendor/key': true } },
    };
    setTraceMeta(request, { traceparent: TP, tracestate: 'gw=2' });
    expect(request.params).toEqual({ name: 'echo', arguments: { x: 1 }, _meta: { progressToken: 7, traceparent: TP, tracestate: 'gw=2', 'vendor/key': true } });
  });

  it('drops a client tracestate when our context has none', () => {
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: { traceparent: 'old', tracestate: 'old=1' } } };
    setTraceMeta(request, { traceparent: TP });
    expect(request.params?._meta).toEqual({ traceparent: TP });
  });
});
