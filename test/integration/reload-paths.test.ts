/**
 * Config reload of URL paths: a reload adds and removes `/servers/<name>/...` and
 * `/groups/<name>/...` for new sessions, and switches `/mcp` between one server's pass-through and
 * the aggregate, while sessions opened before the reload keep what they started with.
 */
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningGateway } from '../../src/main.ts';
import { buildAggregateConfig, colliderServer, connectClient, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { rawWebSocket } from '../support/raw-ws.ts';
import { MCP_HEADERS, recorderServer } from '../support/recorder.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

/** POSTs an initialize to `path`; returns the status and the parsed body (404s are JSON). */
async function initializeAt(gw: RunningGateway, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(path, gw.url), { method: 'POST', headers: MCP_HEADERS, body: initialize });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
}

const notFound = { error: { data: { code: 'GW_ROUTE_NOT_FOUND' } } };

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

describe('reload of URL paths', () => {
  it('serves an added server and group on their own paths at once; a removed server refuses new sessions while its live one carries on', async () => {
    const gw = await startAggregateGateway({ targets: { col: colliderServer(), rec: recorderServer() } });
    try {
      // Before: neither the new server's nor the new group's paths exist.
      expect(await initializeAt(gw, '/servers/fresh/mcp')).toMatchObject({ status: 404, body: notFound });
      expect(await initializeAt(gw, '/groups/g/mcp')).toMatchObject({ status: 404, body: notFound });

      // A pass-through session of `rec`, with a call in flight across the reload that removes it.
      const old = await connectClient(gw, '/servers/rec/mcp');
      let progressed!: () => void;
      const started = new Promise<void>((resolve) => (progressed = resolve));
      const slow = old.callTool({ name: 'slow', arguments: { ms: 1_500, steps: 3 } }, undefined, { onprogress: () => progressed() });
      await started;

      gw.reload(buildAggregateConfig({ targets: { col: colliderServer(), fresh: colliderServer() }, groups: { g: ['fresh', 'col'] } }));

      // The removed server's live session: the in-flight call completes, and the session goes on.
      expect(textOf(await slow)).toBe('done');
      expect(textOf(await old.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');

      // The added server: Streamable HTTP and WebSocket, plain names (pass-through).
      const fresh = await connectClient(gw, '/servers/fresh/mcp');
      expect(await toolNames(fresh)).toContain('echo');
      expect(textOf(await fresh.callTool({ name: 'echo', arguments: { message: 'new path' } }))).toBe('collider echo: new path');
      await fresh.close();
      const peer = await openWs(wsUrl(gw.url, '/servers/fresh/ws'));
      const answer = await initializeWs(peer);
      expect(answer).toMatchObject({ result: { serverInfo: { name: 'collider' } } });
      peer.socket.close(1000);
      await peer.closed;

      // And the legacy HTTP+SSE transport, its messages path announced under the new name.
      const legacy = await openLegacyStream(new URL('/servers/fresh/sse', gw.url));
      expect(legacy.endpoint.pathname).toBe('/servers/fresh/messages');
      expect(await legacy.post(JSON.parse(initialize))).toBe(202);
      expect(await legacy.nextMessage()).toMatchObject({ id: 0, result: { serverInfo: { name: 'collider' } } });
      legacy.close();

      // The added group: an aggregate of its members, prefixed names.
      const grouped = await connectClient(gw, '/groups/g/mcp');
      const names = await toolNames(grouped);
      expect(names).toEqual(expect.arrayContaining(['fresh__echo', 'col__echo']));
      expect(textOf(await grouped.callTool({ name: 'fresh__echo', arguments: { message: 'group' } }))).toBe('collider echo: group');

      // The removed server's paths refuse new sessions on every transport, with the usual 404.
      const refused = await initializeAt(gw, '/servers/rec/mcp');
      expect(refused).toMatchObject({ status: 404, body: notFound });
      expect((refused.body as { error: { message: string } }).error.message).toContain('removed');
      await expect(rawWebSocket(wsUrl(gw.url, '/servers/rec/ws'))).rejects.toThrow('404');
      const sse = await fetch(new URL('/servers/rec/sse', gw.url), { headers: { accept: 'text/event-stream' } });
      expect(sse.status).toBe(404);
      expect(await sse.json()).toMatchObject(notFound);
      // A name never configured: the same envelope as any unknown path.
      expect(await initializeAt(gw, '/servers/nope/mcp')).toMatchObject({ status: 404, body: notFound });
      await expect(rawWebSocket(wsUrl(gw.url, '/groups/nope/ws'))).rejects.toThrow('404');

      // A reload that removes the group: its path refuses new sessions, its live session keeps
      // the group's servers (still configured) until it ends.
      gw.reload(buildAggregateConfig({ targets: { col: colliderServer(), fresh: colliderServer() } }));
      expect(await initializeAt(gw, '/groups/g/mcp')).toMatchObject({ status: 404, body: notFound });
      expect(textOf(await grouped.callTool({ name: 'fresh__echo', arguments: { message: 'kept' } }))).toBe('collider echo: kept');
      expect(await toolNames(grouped)).toEqual(expect.arrayContaining(['fresh__echo', 'col__echo']));
      await grouped.close();

      // The old session still works after all that, and ends normally.
      expect(textOf(await old.callTool({ name: 'echo', arguments: { text: 'last' } }))).toBe('last');
      await old.close();
    } finally {
      await gw.close();
    }
  });

  it('switches /mcp from pass-through to the aggregate and back for new sessions; sessions opened before keep what they started with', async () => {
    const logLines: string[] = [];
    const gw = await startAggregateGateway({ targets: { col: colliderServer() }, logLines });
    try {
      const single = await connectClient(gw);
      expect(await toolNames(single)).toContain('echo');

      gw.reload(buildAggregateConfig({ targets: { col: colliderServer(), rec: recorderServer() } }));

      // The log says where the paths are now.
      const reloaded = logLines.map((line) => JSON.parse(line) as { msg?: string; endpoints?: string[] }).find((l) => l.msg === 'config reloaded');
      expect(reloaded?.endpoints).toEqual([`${gw.url}/mcp`, `${gw.url}/servers/col/mcp`, `${gw.url}/servers/rec/mcp`]);

      const aggregate = await connectClient(gw);
      expect(await toolNames(aggregate)).toEqual(expect.arrayContaining(['col__echo', 'rec__echo']));
      expect(textOf(await aggregate.callTool({ name: 'rec__echo', arguments: { text: 'merged' } }))).toBe('merged');
      // WebSocket at /ws follows too: the gateway answers initialize itself now.
      const peer = await openWs(wsUrl(gw.url, '/ws'));
      expect(await initializeWs(peer)).toMatchObject({ result: { serverInfo: { name: 'switchboard' } } });
      peer.socket.close(1000);
      await peer.closed;
      // The session opened before the switch is still the pass-through one.
      expect(await toolNames(single)).toContain('echo');
      expect(textOf(await single.callTool({ name: 'echo', arguments: { message: 'old' } }))).toBe('collider echo: old');

      // An aggregate session id is unknown on a server's own path (sessions do not cross endpoints).
      const aggregateId = (aggregate.transport as StreamableHTTPClientTransport).sessionId as string;
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' });
      const crossed = await fetch(new URL('/servers/col/mcp', gw.url), {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'mcp-session-id': aggregateId, 'mcp-protocol-version': '2025-11-25' },
        body: ping,
      });
      expect(crossed.status).toBe(404);
      expect(await crossed.json()).toMatchObject({ error: { data: { code: 'GW_SESSION_NOT_FOUND' } } });

      // Back to one server: new sessions get its pass-through again; the aggregate session carries on.
      gw.reload(buildAggregateConfig({ targets: { col: colliderServer() } }));
      const again = await connectClient(gw);
      expect(await toolNames(again)).toContain('echo');
      expect(textOf(await aggregate.callTool({ name: 'col__echo', arguments: { message: 'kept' } }))).toBe('collider echo: kept');
      expect(textOf(await single.callTool({ name: 'echo', arguments: { message: 'still' } }))).toBe('collider echo: still');
      await Promise.all([single.close(), aggregate.close(), again.close()]);

      // None of that needed a restart; a new listener address still does, and says so.
      const restart = 'take effect only after a restart';
      expect(logLines.filter((line) => line.includes(restart))).toEqual([]);
      const next = buildAggregateConfig({ targets: { col: colliderServer() } });
      gw.reload({ ...next, listen: { ...next.listen, port: gw.port + 1 } });
      const warned = logLines.filter((line) => line.includes(restart));
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0] as string)).toMatchObject({ needRestart: ['listen address'] });
    } finally {
      await gw.close();
    }
  });
});
