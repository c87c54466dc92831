/**
 * The legacy HTTP+SSE downstream (2024-11-05) at the HTTP level: the endpoint event, 202 for every
 * accepted POST with answers on the stream, statuses and envelopes for bad POSTs, keep-alive
 * comments, and the stream's end as the session's end. The SDK client's view is in test/contract/.
 */
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { openLegacyStream, type LegacyStream } from '../support/legacy-sse.ts';
import { recorderServer } from '../support/recorder.ts';

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } } };

async function postRaw(url: URL, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

async function initialized(stream: LegacyStream): Promise<Record<string, unknown>> {
  expect(await stream.post(initialize)).toBe(202);
  const answer = await stream.nextMessage();
  expect(await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
  return answer;
}

describe('legacy HTTP+SSE downstream', () => {
  it('announces the POST endpoint, takes messages with 202 and answers on the stream', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const short = await openLegacyStream(new URL('/sse', gw.url));
      expect(short.endpoint.pathname).toBe('/messages');
      expect(short.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await initialized(short)).toMatchObject({ id: 0, result: { protocolVersion: '2024-11-05', serverInfo: { name: 'recorder' } } });
      expect(await short.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'old client' } } })).toBe(202);
      expect(await short.nextMessage()).toMatchObject({ id: 1, result: { content: [{ text: 'old client' }] } });
      // Server-initiated messages go on the same stream.
      expect(await short.post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'log', arguments: { count: 2 } } })).toBe(202);
      const kinds = [await short.nextMessage(), await short.nextMessage(), await short.nextMessage()].map((m) => m.method ?? m.id);
      expect(kinds).toEqual(['notifications/message', 'notifications/message', 2]);
      short.close();

      const long = await openLegacyStream(new URL('/servers/rec/sse', gw.url));
      expect(long.endpoint.pathname).toBe('/servers/rec/messages');
      expect(await initialized(long)).toMatchObject({ id: 0, result: {} });
      long.close();
    } finally {
      await gw.close();
    }
  });

  it('answers bad POSTs with the right status and a JSON-RPC envelope', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer(), other: recorderServer() }, limits: { maxBodyBytes: 1024 } });
    try {
      const stream = await openLegacyStream(new URL('/servers/rec/sse', gw.url));
      const messages = new URL('/servers/rec/messages', gw.url);
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

      const missing = await postRaw(messages, ping);
      expect(missing).toMatchObject({ status: 400, body: { id: null, error: { code: -32600, data: { code: 'GW_SESSION_REQUIRED' } } } });
      const unknown = await postRaw(new URL('?sessionId=nope', messages), ping);
      expect(unknown).toMatchObject({ status: 404, body: { error: { data: { code: 'GW_SESSION_NOT_FOUND' } } } });
      // A session is unknown on another target's endpoint.
      const elsewhere = await postRaw(new URL(`/servers/other/messages?sessionId=${stream.sessionId}`, gw.url), ping);
      expect(elsewhere.status).toBe(404);

      const parse = await postRaw(stream.endpoint, '{"jsonrpc":');
      expect(parse).toMatchObject({ status: 400, body: { id: null, error: { code: -32700, data: { code: 'GW_PARSE_ERROR' } } } });
      const invalid = await postRaw(stream.endpoint, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 7 }));
      expect(invalid).toMatchObject({ status: 400, body: { id: 5, error: { code: -32600 } } });
      const media = await postRaw(stream.endpoint, ping, { 'content-type': 'text/plain' });
      expect(media).toMatchObject({ status: 415, body: { error: { data: { code: 'GW_UNSUPPORTED_MEDIA_TYPE' } } } });
      const big = await postRaw(stream.endpoint, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping', params: { pad: 'x'.repeat(2048) } }));
      expect(big).toMatchObject({ status: 413, body: { error: { data: { code: 'GW_BODY_TOO_LARGE' } } } });

      // None of that broke the session.
      expect(await initialized(stream)).toMatchObject({ id: 0, result: {} });
      stream.close();
    } finally {
      await gw.close();
    }
  });

  it('refuses a foreign Origin on the GET and on the POST', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const get = await fetch(new URL('/sse', gw.url), { headers: { accept: 'text/event-stream', origin: 'http://evil.example' } });
      expect(get.status).toBe(403);
      expect(await get.json()).toMatchObject({ error: { data: { code: 'GW_FORBIDDEN_ORIGIN' } } });
      const stream = await openLegacyStream(new URL('/sse', gw.url));
      const post = await postRaw(stream.endpoint, JSON.stringify(initialize), { 'content-type': 'application/json', origin: 'http://evil.example' });
      expect(post.status).toBe(403);
      stream.close();
    } finally {
      await gw.close();
    }
  });

  it('sends keep-alive comments on an idle stream', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() }, session: { keepAliveMs: 100 } });
    try {
      const stream = await openLegacyStream(new URL('/sse', gw.url));
      await initialized(stream);
      // Nothing is sent after the handshake, so the stream is idle: comments must come.
      const deadline = Date.now() + 10_000;
      while (stream.comments < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(stream.comments).toBeGreaterThanOrEqual(2);
      stream.close();
    } finally {
      await gw.close();
    }
  });

  it('ends the session when the client closes the stream: the endpoint then answers 404', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const stream = await openLegacyStream(new URL('/sse', gw.url));
      await initialized(stream);
      stream.close();
      let status = 202;
      const deadline = Date.now() + 10_000;
      while (status !== 404 && Date.now() < deadline) {
        status = (await postRaw(stream.endpoint, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))).status;
        if (status !== 404) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(404);
    } finally {
      await gw.close();
    }
  });

  it('ends the stream when the upstream crashes, after the failed call is answered on it', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const stream = await openLegacyStream(new URL('/sse', gw.url));
      await initialized(stream);
      expect(await stream.post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'crash', arguments: {} } })).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 3, error: { data: { code: 'GW_UPSTREAM_EXITED' } } });
      await stream.ended;
      expect(await stream.post({ jsonrpc: '2.0', id: 4, method: 'ping' })).toBe(404);
    } finally {
      await gw.close();
    }
  });
});
