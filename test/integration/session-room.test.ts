/**
 * What may be ended for room (session/limits.ts, session/room.ts), measured from outside with real
 * SDK clients, real sockets and real children: a team of clients on one stdio server with the
 * default settings loses nothing; when a cap is truly reached the newcomer is refused at once (503 +
 * Retry-After, on every entry point) and the working clients see nothing.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway } from '../../src/main.ts';
import { createTestLogger, startTestGateway } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { post } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';
import { fileURLToPath } from 'node:url';

const ECHO = fileURLToPath(new URL('../../bench/echo-server.mjs', import.meta.url));
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'room', version: '1' } },
});

/**
 * `clients` SDK clients, each keeping `inFlight` echo calls going from `run()` until `stop()`;
 * counts answers and failures. `close()` closes every client opened, whatever failed.
 */
function team(url: URL) {
  const opened: Array<{ client: Client; transport: StreamableHTTPClientTransport; sessionId: string | undefined }> = [];
  const failures: string[] = [];
  let answered = 0;
  let stopping = false;
  let running: Array<Promise<void>> = [];
  const worker = async (client: Client, lane: number) => {
    for (let i = 0; !stopping; i++) {
      const text = `${lane}-${i}`;
      try {
        const result = await client.callTool({ name: 'echo', arguments: { text } }, undefined, { timeout: 60_000 });
        const content = result.content as Array<{ text?: string }>;
        if (content[0]?.text === text) answered++;
        else failures.push(`wrong answer for ${text}`);
      } catch (err) {
        failures.push(String(err));
      }
    }
  };
  return {
    opened,
    failures,
    get answered() {
      return answered;
    },
    /** Opens `clients` sessions, eight at a time as the benchmark does (each spawns a child). */
    async open(clients: number) {
      let next = 0;
      const opener = async () => {
        while (next < clients) {
          next++;
          const entry = { client: new Client({ name: 'team', version: '1' }), transport: new StreamableHTTPClientTransport(url), sessionId: undefined as string | undefined };
          opened.push(entry);
          await entry.client.connect(entry.transport);
          entry.sessionId = entry.transport.sessionId;
        }
      };
      await Promise.all(Array.from({ length: 8 }, opener));
    },
    run(inFlight: number) {
      running = opened.flatMap(({ client }, c) => Array.from({ length: inFlight }, (_, k) => worker(client, c * inFlight + k)));
    },
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
    async close() {
      stopping = true;
      await Promise.all(opened.map(({ client }) => client.close().catch(() => undefined)));
      await Promise.all(running);
    },
  };
}

describe('a team of clients on one stdio server, default settings', () => {
  it('64 clients x 4 calls in flight: every call answered, no session of an active client ended', async () => {
    const defaults = parseConfig({ gateway: { port: 0 }, mcpServers: { echo: { command: process.execPath, args: [ECHO] } } }, { env: {} });
    const lines: string[] = [];
    const gw = await startGateway(defaults, { logger: createTestLogger('info', lines), env: {} });
    const load = team(new URL('/mcp', gw.url));
    try {
      await load.open(64);
      load.run(4);
      await new Promise((r) => setTimeout(r, 3_000));
      await load.stop();
      expect(load.failures.slice(0, 3)).toEqual([]);
      expect(load.answered).toBeGreaterThan(0);
      // Every client is still on the session it opened, and the gateway ended none for room.
      for (const { transport, sessionId } of load.opened) expect(transport.sessionId).toBe(sessionId);
      expect(lines.filter((l) => l.includes('to make room'))).toEqual([]);
      console.log(`64x4 on defaults: ${load.answered} calls answered in 3 s, ${load.failures.length} failed`);
    } finally {
      await load.close();
      await gw.close();
    }
  }, 120_000);
});

describe('a cap truly reached', () => {
  it('the newcomer gets 503 + Retry-After at once on every entry point; the working clients see nothing', async () => {
    const lines: string[] = [];
    const gw = await startTestGateway({ targets: { echo: { command: process.execPath, args: [ECHO] } }, session: { maxChildren: 4 }, logLines: lines });
    const load = team(gw.mcpUrl('echo'));
    try {
      await load.open(4);
      load.run(2);
      const started = performance.now();
      const refused = await post(gw.mcpUrl('echo'), INIT);
      const ms = performance.now() - started;
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json.error).toMatchObject({ data: { code: 'GW_SESSION_LIMIT', kind: 'children', limit: 4 } });
      expect(ms).toBeLessThan(2_000);
      console.log(`refusal of a new session at the cap: ${ms.toFixed(1)} ms`);

      // WebSocket: an error frame with the same error, then "try again later".
      const ws = await openWs(wsUrl(gw.url, '/servers/echo/ws'));
      expect(await ws.next()).toMatchObject({ error: { data: { code: 'GW_SESSION_LIMIT', retryAfterSec: expect.any(Number) } } });
      expect((await ws.closed).code).toBe(1013);
      // Legacy SSE: the GET that would open the session is refused the same way.
      await expect(openLegacyStream(new URL('/servers/echo/sse', gw.url))).rejects.toThrow(/answered 503/);

      await load.stop();
      expect(load.failures).toEqual([]);
      for (const { transport, sessionId } of load.opened) expect(transport.sessionId).toBe(sessionId);
      // One warning for the burst, naming what to raise.
      const warnings = lines.filter((l) => l.includes('limit reached'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/gateway\.session\.maxChildren.*upstream\.mode: shared/);
    } finally {
      await load.close();
      await gw.close();
    }
  }, 60_000);

  it('the per-server cap, met as the new session\'s child would start: 503 on HTTP, 1013 on a WebSocket', async () => {
    const gw = await startTestGateway({ targets: { echo: { command: process.execPath, args: [ECHO] } }, session: { maxChildrenPerTarget: 2 } });
    const load = team(gw.mcpUrl('echo'));
    try {
      await load.open(2);
      load.run(2);
      const refused = await post(gw.mcpUrl('echo'), INIT);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('mcp-session-id')).toBeNull();
      expect(refused.json).toMatchObject({ id: 0, error: { data: { code: 'GW_SESSION_LIMIT', kind: 'target-children', target: 'echo' } } });

      const ws = await openWs(wsUrl(gw.url, '/servers/echo/ws'));
      ws.send(JSON.parse(INIT));
      expect(await ws.next()).toMatchObject({ id: 0, error: { data: { code: 'GW_SESSION_LIMIT', kind: 'target-children' } } });
      expect(await ws.closed).toEqual({ code: 1013, reason: 'GW_SESSION_LIMIT' });

      await load.stop();
      expect(load.failures).toEqual([]);
    } finally {
      await load.close();
      await gw.close();
    }
  }, 60_000);
});
