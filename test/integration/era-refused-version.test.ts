/**
 * `protocol: auto` in front of a 2026-07-28-only server that refuses a first request with -32022
 * naming 2026-07-28 (test/fixtures/version-refusing-upstream.ts, shaped on the conformance mock of
 * the `request-metadata` client scenario): the refusal says 2026, not 2025. The probe asks once
 * more and the gateway bridges; it never sends `initialize`; every request it sends carries
 * clientInfo in its `_meta`. Through the SDK v2 client (2026-07-28) and the SDK v1 client (2025),
 * on a target's URL and on an aggregate.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startRefusingFixture, type RefusingFixture } from '../fixtures/version-refusing-upstream.ts';
import { connect, errorOf } from '../support/bridge-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { textOf } from '../support/recorder.ts';

const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

async function setup(refuseFirst = 1, protocol: 'auto' | '2026' = 'auto'): Promise<{ fixture: RefusingFixture; gw: TestGateway }> {
  const fixture = await startRefusingFixture({ refuseFirst });
  closers.push(() => fixture.close());
  const gw = await startTestGateway({ targets: { r: { type: 'http', url: fixture.url, protocol } } });
  closers.push(() => gw.close());
  return { fixture, gw };
}

async function v2Client(url: URL): Promise<V2Client> {
  const client = new V2Client({ name: 'sdk-v2-test', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new V2Transport(url));
  closers.push(() => client.close());
  return client;
}

/**
 * Nothing 2025-shaped went upstream but `trials` initialize requests (a 2025 client's own
 * handshake is tried once on a server that lists 2026-07-28, upstream/era-first.ts), each refused;
 * and every other request named who asked.
 */
function expectAll2026(fixture: RefusingFixture, trials = 0): void {
  expect(fixture.seen.length).toBeGreaterThan(0);
  const initializes = fixture.seen.filter((s) => s.method === 'initialize');
  expect(initializes.map((s) => s.refused)).toEqual(Array.from({ length: trials }, () => true));
  for (const s of fixture.seen) if (s.method !== 'initialize') expect(s.meta?.[CLIENT_INFO], s.method).toMatchObject({ name: expect.any(String), version: expect.any(String) });
}

describe('a -32022 naming 2026-07-28 is a 2026 server (protocol: auto)', () => {
  it.each([
    { where: 'a target URL', path: '/servers/r/mcp', tool: 'echo' },
    { where: 'an aggregate (one member: names unprefixed)', path: '/mcp', tool: 'echo' },
  ])('the SDK v2 client (2026-07-28) lists and calls a tool through $where', async ({ path, tool }) => {
    const { fixture, gw } = await setup();
    const client = await v2Client(new URL(path, gw.url));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(tool);
    expect(textOf(await client.callTool({ name: tool, arguments: { text: 'through' } }))).toBe('through');
    expect(fixture.seen[0]).toMatchObject({ method: 'server/discover', refused: true });
    expect(fixture.seen[1]).toMatchObject({ method: 'server/discover', refused: false });
    expectAll2026(fixture);
  });

  it('the SDK v1 client (2025) is bridged, and the next session is bridged too', async () => {
    const { fixture, gw } = await setup();
    for (let i = 0; i < 2; i++) {
      const client = await connect(new URL('/servers/r/mcp', gw.url));
      closers.push(() => client.close());
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `v1 ${i}` } }))).toBe(`v1 ${i}`);
    }
    // The first session tried the client's own era once; the second remembered the refusal.
    expectAll2026(fixture, 1);
  });

  it('a bridged request refused once so is sent once more; refused twice, the client gets the refusal', async () => {
    const { fixture, gw } = await setup();
    const client = await connect(new URL('/servers/r/mcp', gw.url));
    closers.push(() => client.close());
    fixture.refuse(1);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('again');
    fixture.refuse(2);
    const error = await errorOf(client.callTool({ name: 'echo', arguments: { text: 'twice' } }));
    expect(error.code).toBe(-32022);
    const calls = fixture.seen.filter((s) => s.method === 'tools/call');
    expect(calls.map((s) => s.refused)).toEqual([true, false, true, true]);
    expectAll2026(fixture, 1);
  });

  it('a discover refused twice fails that start, sends no initialize, and the next session is 2026', async () => {
    const { fixture, gw } = await setup(2);
    await expect(connect(new URL('/servers/r/mcp', gw.url))).rejects.toThrow();
    const client = await connect(new URL('/servers/r/mcp', gw.url));
    closers.push(() => client.close());
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'later' } }))).toBe('later');
    expect(fixture.seen.filter((s) => s.method === 'server/discover').map((s) => s.refused)).toEqual([true, true, false]);
    // The failed start sent no initialize: the one trial comes after the discover that worked.
    expect(fixture.seen.map((s) => s.method).slice(0, 4)).toEqual(['server/discover', 'server/discover', 'server/discover', 'initialize']);
    expectAll2026(fixture, 1);
  });

  it('protocol: 2026 asks server/discover once more too', async () => {
    const { fixture, gw } = await setup(1, '2026');
    const client = await v2Client(new URL('/servers/r/mcp', gw.url));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'pinned' } }))).toBe('pinned');
    expect(fixture.seen.filter((s) => s.method === 'server/discover').map((s) => s.refused)).toEqual([true, false]);
    expectAll2026(fixture);
  });
});
