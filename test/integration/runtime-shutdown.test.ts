/**
 * The Runtime owns every agent the gateway makes to remote targets, whatever config made it:
 * stopping the gateway closes the pooled sockets of a target a reload added, and a target a reload
 * removed gives its sockets up once its last session is done, without waiting for the shutdown.
 * Observed from the upstream's side: the TCP connections the gateway holds open to it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { connectClient, textOf } from '../support/aggregate.ts';
import { buildConfig, startTestGateway, type TestGateway } from '../support/gateway.ts';

/** Resolves once `check` holds, or returns its last value after `ms` (undici keeps idle sockets ~4 s). */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
}

describe('runtime: agents to remote targets', () => {
  const fixtures: HttpFixture[] = [];
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await Promise.all(fixtures.splice(0).map((f) => f.close()));
  });

  const fixture = async () => {
    const f = await startHttpFixture({ getStream: false });
    fixtures.push(f);
    return f;
  };

  it('shutdown closes the pooled sockets of a target that a reload added', async () => {
    const first = await fixture();
    const added = await fixture();
    gw = await startTestGateway({ targets: { first: { type: 'http', url: first.url } } });
    gw.reload(buildConfig({ targets: { first: { type: 'http', url: first.url }, added: { type: 'http', url: added.url } } }));

    const client = await connectClient(gw, '/servers/added/mcp');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    await client.close();
    // The session is over; its agent keeps warm keep-alive sockets for the next session.
    expect(added.openSockets()).toBeGreaterThan(0);

    await gw.close();
    gw = undefined;
    expect(await within(1_000, () => added.openSockets() === 0)).toBe(true);
  });

  it('a target a reload removed closes its sockets when its last session ends, before any shutdown', async () => {
    const kept = await fixture();
    const removed = await fixture();
    const both = { kept: { type: 'http' as const, url: kept.url }, removed: { type: 'http' as const, url: removed.url } };
    gw = await startTestGateway({ targets: both });
    const transport = new StreamableHTTPClientTransport(new URL('/servers/removed/mcp', gw.url));
    const client = new Client({ name: 'runtime-test', version: '1.0.0' });
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');

    gw.reload(buildConfig({ targets: { kept: both.kept } }));
    // A live session of a removed path carries on, on the same agent.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    expect(removed.openSockets()).toBeGreaterThan(0);

    // DELETE: the session ends, and with it the last user of the removed target's agent.
    await transport.terminateSession();
    await client.close();
    expect(await within(1_000, () => removed.openSockets() === 0)).toBe(true);
    // The gateway still serves the kept target.
    const other = await connectClient(gw, '/servers/kept/mcp');
    expect(textOf(await other.callTool({ name: 'echo', arguments: { text: 'kept' } }))).toBe('kept');
    await other.close();
  });
});
