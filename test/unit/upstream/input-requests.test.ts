import { describe, expect, it } from 'vitest';
import { META_INPUT_KEY } from '../../../src/jsonrpc/modern.ts';
import type { JsonObject, JsonRpcMessage } from '../../../src/jsonrpc/types.ts';
import { createInputAsker, toInputRequests } from '../../../src/upstream/input-requests.ts';

describe('createInputAsker', () => {
  it('carries each request under the upstream name in _meta, and answers under the same names', async () => {
    const sent: JsonRpcMessage[] = [];
    const asker = createInputAsker('t', (m) => sent.push(m));
    const requests = toInputRequests(JSON.parse('{"user_name":{"method":"elicitation/create","params":{"message":"?","_meta":{"k":1}}},"__proto__":{"method":"roots/list"}}'));
    if (typeof requests === 'string') throw new Error(requests);
    const answers = asker.ask('call', requests);
    expect(sent.map((m) => (m as { params: JsonObject }).params._meta)).toEqual([{ k: 1, [META_INPUT_KEY]: 'user_name' }, { [META_INPUT_KEY]: '__proto__' }]);
    expect((sent[0] as { params: JsonObject }).params.message).toBe('?');
    for (const m of sent) asker.answer({ jsonrpc: '2.0', id: (m as { id: string }).id, result: { ok: (m as { method: string }).method } });
    const got = await answers;
    // `__proto__` is an answer like any other, not the object's prototype.
    expect(Object.keys(got)).toEqual(['user_name', '__proto__']);
    expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse('{"user_name":{"ok":"elicitation/create"},"__proto__":{"ok":"roots/list"}}'));
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });
});
