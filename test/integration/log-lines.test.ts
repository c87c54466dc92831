/**
 * What the gateway's own log lines look like, read from a real run: no line carries a key twice
 * (an audit line's tool must not shadow the logger's `name`, a single session's upstream lines
 * name their target once), and audit lines name the tool, prompt or URI in their own field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${KEYS.alice}` };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'log-test', version: '1' } } };

const lines: string[] = [];
let gw: RunningGateway;

/** The top-level keys of a JSON object text, in order, duplicates kept (JSON.parse keeps the last). */
function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      let k = j + 1;
      while (text[k] === ' ') k++;
      if (depth === 1 && text[k] === ':') keys.push(JSON.parse(text.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

async function callOn(path: string, tool: string): Promise<void> {
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...session }, body: JSON.stringify(body) });
  try {
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { message: 'x' } } });
    expect(((await res.json()) as { result?: unknown }).result).toBeDefined();
  } finally {
    await fetch(new URL(path, gw.url), { method: 'DELETE', headers: { authorization: HEADERS.authorization, ...session } });
  }
}

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { col: colliderServer(), other: colliderServer() } });
  gw = await startGateway({ ...base, auth: keyAuth(KEYS), logging: { level: 'debug', audit: true } }, { logger: createTestLogger('debug', lines) });
});

afterAll(async () => {
  await gw?.close();
});

describe('log lines', () => {
  it('audit lines name the tool in `tool`, keep the logger name, and no line has a key twice', async () => {
    await callOn('/servers/col/mcp', 'echo');
    await callOn('/mcp', 'other__echo');
    const stateless = await modern(new URL('/servers/col/mcp', gw.url), 'tools/call', { name: 'whoami', arguments: {} }, { headers: { authorization: HEADERS.authorization } });
    expect(stateless.json.result).toBeDefined();

    const twice = lines.filter((l) => new Set(topLevelKeys(l)).size !== topLevelKeys(l).length);
    expect(twice).toEqual([]);
    const audit = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === true);
    expect(audit.find((l) => l.tool === 'echo')).toMatchObject({ name: 'switchboard', method: 'tools/call', era: '2025', server: 'col', principal: 'key:alice', outcome: 'ok' });
    expect(audit.find((l) => l.tool === 'other__echo')).toMatchObject({ name: 'switchboard', era: '2025', server: 'other', outcome: 'ok' });
    // A 2026 request is 2026 in its line, whatever session the gateway held for it upstream.
    expect(audit.find((l) => l.tool === 'whoami')).toMatchObject({ name: 'switchboard', era: '2026', server: 'col', outcome: 'ok' });
    expect(audit.every((l) => l.name === 'switchboard')).toBe(true);
    // The detector itself works: a line with a key twice is caught.
    expect(topLevelKeys('{"a":1,"b":{"a":2},"a":"x\\"a\\":"}')).toEqual(['a', 'b', 'a']);
  });
});
