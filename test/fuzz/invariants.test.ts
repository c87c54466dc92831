/**
 * The fuzzer's judges (test/support/fuzz/invariants.ts) and its generator: they must reject what
 * the gateway must never send, accept what it does send, and replay a case from its seed.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_2025 } from '../support/fuzz/corpus.ts';
import { drawMutated } from '../support/fuzz/case.ts';
import { DOCUMENTED, envelopeProblem, frameProblems, httpAnswerProblems } from '../support/fuzz/invariants.ts';
import { MUTATIONS, raw, serialize } from '../support/fuzz/mutate.ts';
import { caseSeed, createRng } from '../support/fuzz/prng.ts';

const json = (status: number, body: unknown) => ({ status, contentType: 'application/json; charset=utf-8', text: JSON.stringify(body) });
const gwError = (code: number, gw: string, id: unknown = null) => ({ jsonrpc: '2.0', id, error: { code, message: 'm', data: { code: gw } } });

describe('documented statuses, read from docs/errors.md', () => {
  it('include the error statuses and the parser statuses, not 500-range inventions', () => {
    for (const status of [200, 202, 400, 401, 403, 404, 405, 406, 408, 409, 413, 414, 415, 426, 429, 431, 502, 503, 504]) expect(DOCUMENTED.statuses).toContain(status);
    expect(DOCUMENTED.statuses).not.toContain(418);
    expect(DOCUMENTED.codes.get('GW_BODY_TOO_LARGE')).toEqual({ jsonrpc: -32600, http: 413 });
  });
});

describe('envelopeProblem', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, result: {} }, undefined],
    [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }, undefined],
    [{ jsonrpc: '2.0', method: 'notifications/progress', params: {} }, undefined],
    [{ jsonrpc: '2.0', id: 1 }, 'needs exactly one of result and error'],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } }, 'needs exactly one of result and error'],
    [{ jsonrpc: '2.0', id: null, result: {} }, 'a result with a null id'],
    [{ jsonrpc: '1.0', id: 1, result: {} }, 'jsonrpc is "1.0"'],
    [{ jsonrpc: '2.0', id: {}, result: {} }, 'response id {}'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'x' } }, expect.stringContaining('bad error object')],
    [[], 'not an object'],
  ])('%j -> %s', (value, problem) => {
    expect(envelopeProblem(value)).toEqual(problem);
  });

  it('calls GW_INTERNAL a problem: it means an unplanned failure', () => {
    expect(envelopeProblem({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error', data: { code: 'GW_INTERNAL' } } })).toContain('GW_INTERNAL');
  });
});

describe('httpAnswerProblems', () => {
  const ids = new Set(['1']);
  it('accepts a result, a documented error, and an empty 202', () => {
    expect(httpAnswerProblems(json(200, { jsonrpc: '2.0', id: 1, result: {} }), ids)).toEqual([]);
    expect(httpAnswerProblems(json(413, gwError(-32600, 'GW_BODY_TOO_LARGE')), ids)).toEqual([]);
    expect(httpAnswerProblems({ status: 202, contentType: '', text: '' }, ids)).toEqual([]);
    const sse = { status: 200, contentType: 'text/event-stream', text: 'id: 1\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n' };
    expect(httpAnswerProblems(sse, ids)).toEqual([]);
  });

  it("accepts a 2026 upstream's own error with the status the spec gives its code, and no other", () => {
    const upstream = (code: number) => ({ jsonrpc: '2.0', id: 1, error: { code, message: 'from the upstream' } });
    expect(httpAnswerProblems(json(404, upstream(-32601)), ids)).toEqual([]);
    expect(httpAnswerProblems(json(400, upstream(-32021)), ids)).toEqual([]);
    expect(httpAnswerProblems(json(400, upstream(-32601)), ids).join()).toContain('without a documented GW_* code');
    expect(httpAnswerProblems(json(404, upstream(-32602)), ids).join()).toContain('without a documented GW_* code');
  });

  it('rejects an undocumented status, a status the docs do not give for the code, a body that is not JSON-RPC', () => {
    expect(httpAnswerProblems(json(500, gwError(-32603, 'GW_INTERNAL')), ids).join()).toContain('GW_INTERNAL');
    expect(httpAnswerProblems(json(418, gwError(-32600, 'GW_INVALID_REQUEST')), ids).join()).toContain('not a documented status');
    expect(httpAnswerProblems(json(400, gwError(-32600, 'GW_BODY_TOO_LARGE')), ids).join()).toContain('docs/errors.md says 413');
    expect(httpAnswerProblems(json(400, gwError(-32700, 'GW_INVALID_REQUEST')), ids).join()).toContain('docs/errors.md says -32600');
    expect(httpAnswerProblems({ status: 400, contentType: 'text/html', text: '<h1>Bad</h1>' }, ids).join()).toContain('not JSON');
    expect(httpAnswerProblems({ status: 202, contentType: '', text: 'x' }, ids).join()).toContain('202 with a body');
    expect(httpAnswerProblems(json(200, { jsonrpc: '2.0', id: 2, result: {} }), ids).join()).toContain('did not carry');
  });

  it('checks WebSocket frames the same way', () => {
    expect(frameProblems('{"jsonrpc":"2.0","id":1,"result":{}}')).toEqual([]);
    expect(frameProblems('not json').join()).toContain('not JSON');
  });
});

describe('the generator', () => {
  it('replays a case from its seed and index', () => {
    const draw = (index: number) => drawMutated(createRng(caseSeed(7, index)), { echo: 'echo', slow: 'slow' }, { maxBodyBytes: 1024 });
    expect(draw(3)).toEqual(draw(3));
    expect(draw(3)).not.toEqual(draw(4));
  });

  it('writes raw JSON text where a value cannot hold it', () => {
    expect(serialize({ id: raw('-0'), n: raw('1e400') })).toBe('{"id":-0,"n":1e400}');
  });

  it('every mutation produces bytes from every client seed', () => {
    const rng = createRng(1);
    const seeds = CLIENT_2025.messages({ rng, id: () => 1, tools: { echo: 'echo', slow: 'slow' } });
    for (const mutation of MUTATIONS) for (const seed of seeds) expect(Buffer.isBuffer(mutation.apply(seed, rng, { maxBodyBytes: 4096 }))).toBe(true);
  });
});
