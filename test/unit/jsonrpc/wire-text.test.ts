import { describe, expect, it } from 'vitest';
import { parseJson, toMessage } from '../../../src/jsonrpc/envelope.ts';
import type { JsonRpcMessage, JsonRpcResponse } from '../../../src/jsonrpc/types.ts';
import { dropRawText, keepRawText, RAW_TEXT_MIN_CHARS, toWireText } from '../../../src/jsonrpc/wire-text.ts';

const big = 'x'.repeat(RAW_TEXT_MIN_CHARS);

/** Parses a line as the stdout reader does and keeps its text. */
function read(line: string): JsonRpcResponse {
  const message = toMessage(parseJson(line)) as JsonRpcMessage;
  keepRawText(message, line);
  return message as JsonRpcResponse;
}

describe('toWireText', () => {
  it('splices the restored id into a large line with the id first, keeping the rest byte for byte', () => {
    const line = `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"${big}"}],"extra":{"id":99}}}`;
    const message = read(line);
    message.id = 'client "id" é';
    const text = toWireText(message);
    expect(text).toBe(line.replace('"id":17', `"id":${JSON.stringify('client "id" é')}`));
    expect(JSON.parse(text)).toEqual({ ...JSON.parse(line), id: 'client "id" é' });
  });

  it('finds an id written last (as the TypeScript SDK does) and ignores nested ids', () => {
    const line = `{"result":{"content":[{"text":"${big}"}],"meta":{"id":5}},"jsonrpc":"2.0", "id" : 5 }`;
    const message = read(line);
    message.id = 42;
    expect(toWireText(message)).toBe(line.replace('"id" : 5 }', '"id" : 42 }'));
  });

  it('skips an id nested before the top-level one', () => {
    const line = `{"jsonrpc":"2.0","result":{"id":3,"text":"${big}"},"id":3,"z":1}`;
    const message = read(line);
    message.id = 'c';
    expect(JSON.parse(toWireText(message))).toEqual({ ...JSON.parse(line), id: 'c' });
  });

  it('keeps nothing for a small line or a changed message', () => {
    const small = read('{"jsonrpc":"2.0","id":1,"result":{}}');
    small.id = 'a';
    expect(toWireText(small)).toBe('{"jsonrpc":"2.0","id":"a","result":{}}');
    const line = `{"jsonrpc":"2.0","id":2,"result":{"text":"${big}"}}`;
    const changed = read(line);
    (changed as { result: Record<string, unknown> }).result.text = 'rewritten';
    dropRawText(changed);
    expect(toWireText(changed)).toBe('{"jsonrpc":"2.0","id":2,"result":{"text":"rewritten"}}');
  });
});
