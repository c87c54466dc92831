/**
 * DNS rebinding (2025-11-25 transport, "Security Warning": servers MUST validate Origin). A Host
 * or Origin that merely starts like a loopback address is a DNS name anyone can point at us, so it
 * is refused on every downstream transport and every path; real loopback names still pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { MCP_HEADERS, recorderServer } from '../support/recorder.ts';
import { rawRequest } from '../support/raw-http.ts';

let gw: TestGateway;
const base = () => new URL(gw.url);

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() } });
});
afterAll(async () => {
  await gw?.close();
});

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const WS_HEADERS = {
  Upgrade: 'websocket',
  Connection: 'Upgrade',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Protocol': 'mcp',
};

/** What each downstream transport sends first, on the root path and on the server's own path. */
function attempts(host: string, origin?: string) {
  const extra: Record<string, string> = { Host: host, ...(origin === undefined ? {} : { Origin: origin }) };
  return ['', '/servers/rec'].flatMap((prefix) => [
    { what: `POST ${prefix}/mcp`, send: () => rawRequest(base(), 'POST', `${prefix}/mcp`, { ...extra, ...MCP_HEADERS }, INIT) },
    { what: `GET ${prefix}/sse`, send: () => rawRequest(base(), 'GET', `${prefix}/sse`, { ...extra, Accept: 'text/event-stream' }) },
    { what: `upgrade ${prefix}/ws`, send: () => rawRequest(base(), 'GET', `${prefix}/ws`, { ...extra, ...WS_HEADERS }) },
  ]);
}

describe('DNS rebinding', () => {
  const port = () => base().port;

  it.each([
    ['a DNS name that starts with a loopback address', () => `127.0.0.1.evil.com:${port()}`],
    ['a DNS name under 127.', () => `127.evil.com:${port()}`],
    ['localhost as a label of a foreign name', () => `localhost.evil.com:${port()}`],
    ['a bracketed name with trailing junk', () => `[::1].evil.com:${port()}`],
  ])('Host as %s -> 403 with a JSON-RPC body on every transport and path', async (_what, host) => {
    for (const attempt of attempts(host())) {
      const answer = await attempt.send();
      expect(answer.status, attempt.what).toBe(403);
      expect(JSON.parse(answer.body), attempt.what).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_FORBIDDEN_HOST' } } });
    }
  });

  it('an Origin that starts like a loopback address -> 403 on every transport and path', async () => {
    for (const attempt of attempts(`127.0.0.1:${port()}`, 'http://127.0.0.1.evil.com')) {
      const answer = await attempt.send();
      expect(answer.status, attempt.what).toBe(403);
      expect(JSON.parse(answer.body), attempt.what).toMatchObject({ error: { data: { code: 'GW_FORBIDDEN_ORIGIN' } } });
    }
  });

  it('real loopback names pass: 127.0.0.2, [::1], localhost, with loopback Origins', async () => {
    const cases: Array<[string, string]> = [
      [`127.0.0.2:${port()}`, 'http://127.0.0.5:3000'],
      [`[::1]:${port()}`, 'http://[::1]:3000'],
      [`localhost:${port()}`, 'http://localhost:5173'],
      [`LOCALHOST.:${port()}`, 'https://app.localhost'],
    ];
    for (const [host, origin] of cases) {
      const init = await rawRequest(base(), 'POST', '/mcp', { Host: host, Origin: origin, ...MCP_HEADERS }, INIT);
      expect(init.status, host).toBe(200);
      const upgrade = await rawRequest(base(), 'GET', '/ws', { Host: host, Origin: origin, ...WS_HEADERS });
      expect(upgrade.status, host).toBe(101);
    }
  });
});
