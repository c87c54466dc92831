/**
 * Members of an aggregate started lazily inside a client's first call: the client's declared
 * roots are in place before that call reaches the member, and a member slower than the list
 * deadline is not silently missing: once it is up the client gets tools/list_changed.
 * Real children (test/fixtures/misbehaving-server.mjs), the SDK client over real sockets.
 */
import { ListRootsRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { connectClient, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { fixture } from '../support/recorder.ts';

const open: RunningGateway[] = [];
afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});

const misbehaving = (mode: string, ...args: string[]) => ({ command: process.execPath, args: [fixture('misbehaving-server.mjs'), mode, ...args] });

describe('lazy start of aggregate members', () => {
  it("the first call to a server that asks for roots on initialized sees the client's roots", async () => {
    const gw = await startAggregateGateway({ targets: { fs: misbehaving('asks-roots'), other: misbehaving('normal') } });
    open.push(gw);
    const client = await connectClient(gw, '/mcp', { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///client-root', name: 'client' }] }));
    // As the Inspector does: list (which starts the member), then call at once.
    await client.listTools();
    const first = await client.callTool({ name: 'fs__roots', arguments: {} });
    expect(textOf(first)).toBe('file:///client-root');
    await client.close();
  });

  it('a member slower than the list deadline is announced with tools/list_changed once it is up', async () => {
    const gw = await startAggregateGateway({
      targets: { fast: misbehaving('normal'), slow: misbehaving('normal', '--init-delay-ms=2500') },
      listTimeoutMs: 500,
    });
    open.push(gw);
    const client = await connectClient(gw);
    let changed!: () => void;
    const listChanged = new Promise<void>((resolve) => (changed = resolve));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
    const first = await client.listTools();
    expect(first.tools.map((t) => t.name)).toContain('fast__echo');
    expect(first.tools.map((t) => t.name)).not.toContain('slow__echo');
    const heard = await Promise.race([listChanged.then(() => 'list_changed'), new Promise((r) => setTimeout(() => r('nothing'), 15_000))]);
    expect(heard).toBe('list_changed');
    const second = await client.listTools();
    expect(second.tools.map((t) => t.name)).toContain('slow__echo');
    await client.close();
  });
});
