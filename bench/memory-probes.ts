/**
 * Two memory probes of the gateway, in-process with `--expose-gc` so live heap (after a full GC)
 * can be told apart from RSS (which also holds heap capacity and malloc arenas a burst left):
 *
 *   node --expose-gc bench/memory-probes.ts flood [notifications=200000] [rounds=4]
 *     a client that never reads its SSE answer while the upstream floods notifications
 *   node --expose-gc bench/memory-probes.ts cycles [sessions=1000]
 *     sessions opened (initialize, one call) and closed (DELETE) one after another on a stdio child
 *
 * Prints rss / heapUsed / external per round. Readings are in docs/downstreams.md ("Memory").
 */
import { connect } from 'node:net';
import { startGateway } from '../src/main.ts';
import { buildConfig, createTestLogger } from '../test/support/gateway.ts';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('../test/fixtures/misbehaving-server.mjs', import.meta.url));
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });

function mem(): string {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  return `rss ${mib(m.rss)} MiB, heapUsed ${mib(m.heapUsed)} MiB, external ${mib(m.external)} MiB`;
}

async function initialize(base: URL): Promise<string> {
  const res = await fetch(new URL('/mcp', base), { method: 'POST', headers: HEADERS, body: INIT });
  await res.text();
  return res.headers.get('mcp-session-id') ?? '';
}

async function flood(count: number, rounds: number): Promise<void> {
  const config = buildConfig({ targets: { f: { command: process.execPath, args: [fixture, 'flood-notifications', `--count=${count}`] } } });
  const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
  const base = new URL(gw.url);
  const sid = await initialize(base);
  console.log('before', mem());
  for (let round = 1; round <= rounds; round++) {
    const socket = connect(Number(base.port), base.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause(); // never reads
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: ${HEADERS.accept}\r\n` +
        `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: ${CALL.length}\r\n\r\n${CALL}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    console.log(`after flood ${round} of ${count} notifications to a paused reader`, mem());
    socket.destroy();
  }
  await gw.close();
}

async function cycles(sessions: number): Promise<void> {
  const config = buildConfig({ targets: { f: { command: process.execPath, args: [fixture, 'normal'] } } });
  const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
  const base = new URL(gw.url);
  console.log('before', mem());
  for (let i = 1; i <= sessions; i++) {
    const sid = await initialize(base);
    const headers = { ...HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    await (await fetch(new URL('/mcp', base), { method: 'POST', headers, body: CALL })).text();
    await (await fetch(new URL('/mcp', base), { method: 'DELETE', headers })).text();
    if (i % Math.max(1, Math.floor(sessions / 5)) === 0) console.log(`after ${i} sessions`, mem());
  }
  await gw.close();
}

const [mode = 'flood', a, b] = process.argv.slice(2);
if (mode === 'flood') await flood(Number(a ?? 200_000), Number(b ?? 4));
else await cycles(Number(a ?? 1_000));
process.exit(0);
