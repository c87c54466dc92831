/**
 * Per-tool step-up attacked from every side: the guarded tool (`files`' `echo`, which needs
 * `files:write`) asked for with a token holding only `mcp` through every path to it (the server's
 * own path, the aggregate's prefixed name, a group, WebSocket, legacy SSE, a 2026 request, a
 * 2025-03-26 batch) and under look-alike names; a token of another principal on a stepped-up
 * session. Each is refused the way its transport allows, and none of it reaches the upstream:
 * the recorder children report every message they received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { modern } from '../support/modern.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { post, rpc, textOf, type RawAnswer } from '../support/recorder.ts';
import { callsMarked, SCOPES, startStepUpGateway, type StepUpGateway } from '../support/step-up.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

let as: AuthorizationServer;
let su: StepUpGateway;

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: SCOPES });
  su = await startStepUpGateway(as, 'http');
});

afterAll(async () => {
  await su?.close();
  await as?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const url = (path: string) => new URL(path, su.gw.url);
const metadata = (path: string) => `resource_metadata="${su.gw.url}/.well-known/oauth-protected-resource${path}"`;
const call = (id: string, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: id } } });
const STEP_UP = { code: -32600, data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:write'], missingScopes: ['files:write'] } };

/** A 2025 session on `path` opened with a token of `client` holding `scope`. */
async function session(path: string, scope = 'mcp', client = 'svc-a', version = '2025-11-25') {
  const token = await su.token(client, path, scope);
  return rpc.initialize(url(path), version, bearer(token));
}

function expectChallenge(answer: RawAnswer, path: string, id: string): void {
  expect(answer.status, answer.text).toBe(403);
  expect(answer.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", ${metadata(path)}, scope="mcp files:write"`);
  expect(answer.json).toMatchObject({ jsonrpc: '2.0', id, error: STEP_UP });
}

describe('step-up on every path to one tool', () => {
  it("the server's own path: refused, while a tool needing nothing more is served on the same session", async () => {
    const s = await session('/servers/files/mcp');
    expectChallenge(await s.request(call('denied-own', 'echo')), '/servers/files/mcp', 'denied-own');
    const whoami = await s.request(call('free-own', 'whoami'));
    expect(whoami.status).toBe(200);
    expect(textOf(whoami.json.result)).toContain('pid');
    await s.delete();
  });

  it('look-alike spellings of the name need the same scope (case, full-width letters, padding)', async () => {
    const s = await session('/servers/files/mcp');
    for (const [i, name] of ['ECHO', 'Echo', '\uFF45cho', ' echo'].entries()) expectChallenge(await s.request(call(`denied-alike-${i}`, name)), '/servers/files/mcp', `denied-alike-${i}`);
    await s.delete();
  });

  it("the aggregate's prefixed name, and a group: the server's own rule, each path's own metadata", async () => {
    const agg = await session('/mcp');
    expectChallenge(await agg.request(call('denied-aggregate', 'files__echo')), '/mcp', 'denied-aggregate');
    // The rule is the target's: the same tool name of another target needs nothing more.
    const other = await agg.request(call('free-other', 'other__echo'));
    expect(textOf(other.json.result)).toBe('free-other');
    const group = await session('/groups/g/mcp');
    expectChallenge(await group.request(call('denied-group', 'files__echo')), '/groups/g/mcp', 'denied-group');
    await Promise.all([agg.delete(), group.delete()]);
  });

  it('prompts by name and resources by URI, on the server path and through the aggregate', async () => {
    const get = (id: string, name: string) => ({ jsonrpc: '2.0', id, method: 'prompts/get', params: { name } });
    const read = (id: string, uri: string) => ({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri } });
    const challenge = (path: string) => `Bearer error="insufficient_scope", ${metadata(path)}, scope="mcp files:admin"`;
    const own = await session('/servers/everything/mcp');
    for (const request of [get('p-own', 'simple-prompt'), read('r-own', 'demo://resource/dynamic/text/1')]) {
      const answer = await own.request(request);
      expect(answer.status, answer.text).toBe(403);
      expect(answer.headers.get('www-authenticate')).toBe(challenge('/servers/everything/mcp'));
      expect(answer.json).toMatchObject({ error: { data: { code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:admin'], missingScopes: ['files:admin'] } } });
    }
    const agg = await session('/mcp');
    for (const request of [get('p-agg', 'everything__simple-prompt'), read('r-agg', 'everything+demo://resource/dynamic/text/1')]) {
      const answer = await agg.request(request);
      expect(answer.status, answer.text).toBe(403);
      expect(answer.headers.get('www-authenticate')).toBe(challenge('/mcp'));
    }
    const admin = await session('/mcp', 'mcp files:admin');
    expect((await admin.request(get('p-admin', 'everything__simple-prompt'))).json).toHaveProperty('result.messages');
    expect((await admin.request(read('r-admin', 'everything+demo://resource/dynamic/text/1'))).json).toHaveProperty('result.contents');
    await Promise.all([own.delete(), agg.delete(), admin.delete()]);
  });

  it('a 2026 request: 403 with its challenge; with the scope, served', async () => {
    const narrow = await su.token('svc-a', '/servers/files/mcp', 'mcp');
    const refused = await modern(url('/servers/files/mcp'), 'tools/call', { name: 'echo', arguments: { text: 'denied-2026' } }, { id: 'denied-2026', headers: bearer(narrow) });
    expectChallenge(refused, '/servers/files/mcp', 'denied-2026');
    const wide = await su.token('svc-a', '/servers/files/mcp', 'mcp files:write');
    const served = await modern(url('/servers/files/mcp'), 'tools/call', { name: 'echo', arguments: { text: 'allowed-2026' } }, { id: 2, headers: bearer(wide) });
    expect(served.status).toBe(200);
    expect(textOf(served.json.result)).toBe('allowed-2026');
  });

  it('a WebSocket cannot take a 403 past the upgrade: the JSON-RPC error in a frame, and the socket goes on', async () => {
    const token = await su.token('svc-a', '/servers/files/ws', 'mcp');
    const peer = await openWs(wsUrl(su.gw.url, '/servers/files/ws'), ['mcp', `bearer.${token}`]);
    try {
      await initializeWs(peer);
      peer.send(call('denied-ws', 'echo'));
      expect((await peer.until('denied-ws')).at(-1)).toMatchObject({ id: 'denied-ws', error: STEP_UP });
      peer.send(call('free-ws', 'whoami'));
      expect((await peer.until('free-ws')).at(-1)).toHaveProperty('result');
    } finally {
      peer.socket.close();
    }
  });

  it('legacy SSE: the error comes as a message event, each POST judged by its own token', async () => {
    const narrow = await su.token('svc-a', '/servers/files/sse', 'mcp');
    const wide = await su.token('svc-a', '/servers/files/sse', 'mcp files:write');
    const stream = await openLegacyStream(url('/servers/files/sse'), bearer(narrow));
    const send = async (message: unknown, token: string) => {
      const res = await fetch(stream.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify(message) });
      await res.arrayBuffer();
      expect(res.status).toBe(202);
    };
    try {
      await send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } }, narrow);
      expect(await stream.nextMessage()).toHaveProperty('result');
      await send({ jsonrpc: '2.0', method: 'notifications/initialized' }, narrow);
      await send(call('denied-sse', 'echo'), narrow);
      expect(await stream.nextMessage()).toMatchObject({ id: 'denied-sse', error: STEP_UP });
      // A POST with a token holding the scope, on the same stream (the same principal): served.
      await send(call('allowed-sse', 'echo'), wide);
      expect(textOf((await stream.nextMessage()).result)).toBe('allowed-sse');
    } finally {
      stream.close();
    }
  });

  it('a response that already turned into SSE (routing outlasted a second): the error as an event at 200', async () => {
    const s = await session('/groups/lateg/mcp');
    // The first call starts `late`, whose initialize takes 1.5 s, to learn its names.
    const answer = await s.request(call('denied-late', 'late__echo'));
    expect(answer.status).toBe(200);
    expect(answer.contentType).toContain('text/event-stream');
    expect(answer.headers.get('www-authenticate')).toBeNull();
    expect(answer.json).toMatchObject({ id: 'denied-late', error: STEP_UP });
    await s.delete();
  });

  it('a 2025-03-26 batch answers each request in the array: the refused one with the error, the others served', async () => {
    const s = await session('/servers/files/mcp', 'mcp', 'svc-a', '2025-03-26');
    const answer = await s.postRaw(JSON.stringify([call('denied-batch', 'echo'), call('free-batch', 'whoami')]));
    expect(answer.status).toBe(200);
    expect(answer.events.find((e) => e.id === 'denied-batch')).toMatchObject({ error: STEP_UP });
    expect(answer.events.find((e) => e.id === 'free-batch')).toHaveProperty('result');
    await s.delete();
  });

  it("another principal's token, even one holding the scope, does not reach a session it did not open", async () => {
    const s = await session('/servers/files/mcp', 'mcp files:write', 'svc-a');
    const intruder = await su.token('svc-b', '/servers/files/mcp', 'mcp files:write');
    const answer = await post(url('/servers/files/mcp'), JSON.stringify(call('denied-intruder', 'echo')), { 'mcp-session-id': s.id, 'mcp-protocol-version': '2025-11-25', ...bearer(intruder) });
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ error: { data: { code: 'GW_SESSION_NOT_FOUND' } } });
    await s.delete();
  });

  it('none of the refused calls reached the upstream; the allowed ones did', () => {
    const received = su.received();
    expect(callsMarked(received, 'denied-')).toEqual([]);
    expect(callsMarked(received, 'allowed-2026')).toHaveLength(1);
    expect(callsMarked(received, 'allowed-sse')).toHaveLength(1);
  });
});
