/**
 * `protocol: auto` in front of a server whose server/discover lists 2026-07-28: a 2025 client's
 * own handshake is tried first (upstream/era-first.ts). A server that serves both eras at one URL
 * gives 2025 clients 2025 sessions (nothing is lost to the bridge) while 2026 clients are served
 * in 2026; a 2026-only server refuses the trial once, the connection becomes the bridge, and the
 * refusal is remembered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../fixtures/modern-upstream.ts';
import { connect } from '../support/bridge-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { modern as modernCall, resultOf } from '../support/modern.ts';
import { textOf } from '../support/recorder.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function setup(legacy: 'reject' | 'stateless'): Promise<{ fixture: ModernFixture; gw: TestGateway }> {
  const fixture = await startModernFixture({ legacy });
  cleanups.push(() => fixture.close());
  const gw = await startTestGateway({ targets: { m: { type: 'http', url: fixture.url } } });
  cleanups.push(() => gw.close());
  return { fixture, gw };
}

const hasEnvelope = (seen: { body: unknown }) => JSON.stringify(seen.body).includes('io.modelcontextprotocol/protocolVersion');

describe('a 2025 client in front of a server that lists 2026-07-28 (protocol: auto)', () => {
  it('gets a 2025 session where the server serves both eras, every time', async () => {
    const { fixture, gw } = await setup('stateless');
    for (let i = 0; i < 2; i++) {
      const client = await connect(gw.mcpUrl('m'));
      cleanups.push(() => client.close());
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `native ${i}` } }))).toBe(`native ${i}`);
    }
    // Both sessions initialized upstream with the client's own era, and their calls went as 2025 requests.
    expect(fixture.calls('initialize')).toHaveLength(2);
    const calls = fixture.calls('tools/call', 'echo');
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(hasEnvelope(call)).toBe(false);
  });

  it('while a 2026 client through the same gateway is served in 2026', async () => {
    const { fixture, gw } = await setup('stateless');
    const client = await connect(gw.mcpUrl('m'));
    cleanups.push(() => client.close());
    const answer = await modernCall(gw.mcpUrl('m'), 'tools/call', { name: 'echo', arguments: { text: 'modern' } });
    expect(resultOf(answer).content).toEqual([{ type: 'text', text: 'modern' }]);
    const calls = fixture.calls('tools/call', 'echo');
    expect(calls).toHaveLength(1);
    expect(hasEnvelope(calls[0]!)).toBe(true);
  });

  it('is bridged where the server refuses 2025, after one trial that is remembered', async () => {
    const { fixture, gw } = await setup('reject');
    for (let i = 0; i < 3; i++) {
      const client = await connect(gw.mcpUrl('m'));
      cleanups.push(() => client.close());
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `bridged ${i}` } }))).toBe(`bridged ${i}`);
    }
    expect(fixture.calls('initialize')).toHaveLength(1);
    for (const call of fixture.calls('tools/call', 'echo')) expect(hasEnvelope(call)).toBe(true);
  });
});
