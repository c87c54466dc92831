/**
 * gateway.policy over real sockets and real children: two principals (API keys), two servers,
 * allowed and denied tools. Lists and calls agree on every path (a server's own, the aggregate,
 * WebSocket), a denied call gets the very bytes an unknown tool gets, and a denied server is as
 * unknown as one never configured, down to the WebSocket upgrade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer } from '../support/aggregate.ts';
import { keyAuth } from '../support/auth-server.ts';
import { createTestLogger } from '../support/gateway.ts';
import { rawWebSocket } from '../support/raw-ws.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef0';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'policy-test', version: '1' } } };

const rule = (r: Partial<PolicyRule>): PolicyRule => ({ effect: 'allow', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['*'], prompts: ['*'], resources: ['*'], ...r });
const RULES: PolicyRule[] = [
  // Alice: both servers, but not col's secret_* tools nor its "summarise" prompt.
  rule({ principals: ['key:alice'], servers: ['col', 'other'] }),
  rule({ effect: 'deny', principals: ['key:alice'], servers: ['col'], tools: ['secret_*'], prompts: ['summarise'], resources: [] }),
  // Bob: only other, and only its echo.
  rule({ principals: ['key:bob'], servers: ['other'], tools: ['echo'] }),
];

let gw: RunningGateway;
const logLines: string[] = [];

/** One MCP exchange on `path` as `key`: initialize, then `messages`; returns the JSON answers (raw text too). */
async function exchange(path: string, key: string, ...messages: Array<{ id: number; method: string; params?: unknown }>) {
  const auth = { authorization: `Bearer ${key}` };
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(INIT) });
  if (opened.status !== 200) return { status: opened.status, body: await opened.text(), answers: [] as Array<{ text: string; json: Record<string, any> }> };
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  const answers = [];
  for (const m of messages) {
    const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...auth, ...session }, body: JSON.stringify({ jsonrpc: '2.0', ...m }) });
    const text = await res.text();
    answers.push({ text, json: JSON.parse(text) as Record<string, any> });
  }
  await fetch(new URL(path, gw.url), { method: 'DELETE', headers: { ...auth, ...session } });
  return { status: 200, body: '', answers };
}

const toolNames = (answer: { json: Record<string, any> }) => (answer.json.result.tools as Array<{ name: string }>).map((t) => t.name);
const call = (id: number, name: string) => ({ id, method: 'tools/call', params: { name, arguments: { message: 'x' } } });

beforeAll(async () => {
  const base = buildAggregateConfig({ targets: { col: colliderServer('--page-size=100'), other: colliderServer('--page-size=100') } });
  const auth = keyAuth({ alice: ALICE, bob: BOB });
  gw = await startGateway({ ...base, auth, policy: { rules: RULES }, logging: { level: 'info', audit: true } }, { logger: createTestLogger('info', logLines) });
});

afterAll(async () => {
  await gw?.close();
});

describe('policy', () => {
  it("on a server's own path, a denied tool is absent from the list and its call is byte-identical to an unknown tool's", async () => {
    const { answers } = await exchange('/servers/col/mcp', ALICE, { id: 1, method: 'tools/list' }, call(7, 'secret_admin'), call(7, 'no_such_tool'), call(8, 'echo'));
    expect(toolNames(answers[0]!)).toContain('echo');
    expect(toolNames(answers[0]!).some((n) => n.startsWith('secret_'))).toBe(false);
    expect(answers[1]!.text).toBe(answers[2]!.text.replace('no_such_tool', 'secret_admin'));
    expect(answers[1]!.json.error).toEqual({ code: -32602, message: 'Unknown tool: secret_admin' });
    expect(answers[3]!.json.result).toBeDefined();
  });

  it('on the aggregate, each principal sees only what it is granted, and calls agree with the list', async () => {
    const alice = await exchange('/mcp', ALICE, { id: 1, method: 'tools/list' }, call(2, 'col__secret_admin'), call(2, 'col__secret_nothing'), call(3, 'other__secret_admin'));
    const aliceTools = toolNames(alice.answers[0]!);
    expect(aliceTools).toContain('col__echo');
    expect(aliceTools).toContain('other__secret_admin');
    expect(aliceTools).not.toContain('col__secret_admin');
    expect(alice.answers[1]!.json.error).toMatchObject({ code: -32602, message: 'Unknown tool: col__secret_admin' });
    expect(alice.answers[1]!.text).toBe(alice.answers[2]!.text.replaceAll('col__secret_nothing', 'col__secret_admin'));
    expect(alice.answers[3]!.json.result).toBeDefined();

    const bob = await exchange('/mcp', BOB, { id: 1, method: 'tools/list' }, call(2, 'col__echo'), call(2, 'zzz__echo'), call(3, 'other__echo'), call(4, 'other__whoami'));
    expect(toolNames(bob.answers[0]!)).toEqual(['other__echo']);
    expect(bob.answers[1]!.text).toBe(bob.answers[2]!.text.replaceAll('zzz__echo', 'col__echo'));
    expect(bob.answers[3]!.json.result).toBeDefined();
    expect(bob.answers[4]!.json.error).toMatchObject({ code: -32602, message: 'Unknown tool: other__whoami' });
  });

  it('a denied prompt is absent and refused like an unknown one', async () => {
    const { answers } = await exchange('/servers/col/mcp', ALICE, { id: 1, method: 'prompts/list' }, { id: 2, method: 'prompts/get', params: { name: 'summarise' } });
    expect((answers[0]!.json.result.prompts as Array<{ name: string }>).map((p) => p.name)).toEqual(['greet', 'echo']);
    expect(answers[1]!.json.error).toEqual({ code: -32602, message: 'Unknown prompt: summarise' });
  });

  it('a server the principal may not reach answers exactly like a server never configured, on every transport', async () => {
    const denied = await exchange('/servers/col/mcp', BOB);
    const unknown = await exchange('/servers/nope/mcp', BOB);
    expect(denied.status).toBe(404);
    expect(denied.body).toBe(unknown.body.replace('/servers/nope/', '/servers/col/'));
    const asBob = { authorization: `Bearer ${BOB}` };
    await expect(rawWebSocket(wsUrl(gw.url, '/servers/col/ws'), asBob)).rejects.toThrow('404');
    const allowed = await rawWebSocket(wsUrl(gw.url, '/servers/other/ws'), asBob);
    allowed.socket.destroy();
    const sse = await fetch(new URL('/servers/col/sse', gw.url), { headers: { accept: 'text/event-stream', authorization: `Bearer ${BOB}` } });
    expect(sse.status).toBe(404);
  });

  it('holds on a WebSocket session too', async () => {
    const peer = await openWs(wsUrl(gw.url, '/ws'), ['mcp', `bearer.${BOB}`]);
    await initializeWs(peer);
    peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const [list] = (await peer.until(1)).slice(-1);
    expect(((list as { result: { tools: Array<{ name: string }> } }).result.tools).map((t) => t.name)).toEqual(['other__echo']);
    peer.socket.close();
  });

  it('writes one audit line per tool call, prompt get and resource read: who, what, where, how, how long; never the key', () => {
    const audit = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.audit === true);
    const line = (name: string, principal: string) => audit.find((l) => (l.tool ?? l.prompt) === name && l.principal === principal);
    expect(line('secret_admin', 'key:alice')).toMatchObject({ method: 'tools/call', outcome: 'denied', decision: 'deny', reason: 'policy', msg: 'audit' });
    expect(line('echo', 'key:alice')).toMatchObject({ method: 'tools/call', server: 'col', outcome: 'ok', latencyMs: expect.any(Number), decision: 'allow' });
    expect(line('summarise', 'key:alice')).toMatchObject({ method: 'prompts/get', outcome: 'denied' });
    expect(line('col__echo', 'key:bob')).toMatchObject({ method: 'tools/call', outcome: 'error', code: 'GW_UNKNOWN_TOOL' });
    expect(audit.filter((l) => l.method === 'tools/list')).toEqual([]);
    const all = logLines.join('\n');
    expect(all.includes(ALICE) || all.includes(BOB)).toBe(false);
  });
});
