/**
 * Issue 24 acceptance, the serving half: Debian's HAProxy in round robin (no stickiness) in front of
 * three gateway replicas (each its own OS process) sharing a real Redis, with MCP SDK clients
 * pointed at HAProxy only. 30 clients (25 SDK v1 sessions, 5 SDK v2 clients on 2026-07-28) each
 * initialize, list and make 10 calls; a call's progress streams through a replica that does not
 * own the session; an SSE answer cut mid-call is resumed with Last-Event-ID on another replica;
 * DELETE and the legacy SSE transport's POSTs work from every replica.
 *
 * HAProxy tags each answer with `x-served-by`; the sealed session id names its owner: a request
 * served by another replica than the owner was relayed (the hop).
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLbCluster, type LbCluster } from '../support/lb-cluster.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { MCP_HEADERS, post, rpc, textOf } from '../support/recorder.ts';
import { cutAfterFirstProgress } from '../support/sse-cut.ts';

let c: LbCluster;

beforeAll(async () => {
  c = await startLbCluster({ replicas: 3 });
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

interface Seen {
  method: string;
  rpc: string;
  servedBy: string;
  session: string | undefined;
}

/** A fetch that records, for each request, which replica HAProxy had serve it and for which session. */
function watching(seen: Seen[], cut?: { done: boolean }): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const body = typeof init?.body === 'string' ? init.body : '';
    const session = new Headers(init?.headers).get('mcp-session-id') ?? res.headers.get('mcp-session-id') ?? undefined;
    seen.push({ method: init?.method ?? 'GET', rpc: /"method":"([^"]+)"/.exec(body)?.[1] ?? '', servedBy: res.headers.get('x-served-by') ?? '', session });
    const sse = res.headers.get('content-type')?.startsWith('text/event-stream') === true;
    if (cut === undefined || cut.done || init?.method !== 'POST' || !sse || res.body === null) return res;
    // Drop the first SSE answer after its first progress event: the SDK resumes it with GET + Last-Event-ID.
    cut.done = true;
    return cutAfterFirstProgress(res);
  };
}

const relayed = (seen: readonly Seen[]) => seen.filter((s) => s.session !== undefined && s.servedBy !== '' && c.ownerOf(s.session) !== s.servedBy);

async function v1Client(seen: Seen[], cut?: { done: boolean }) {
  const transport = new StreamableHTTPClientTransport(c.url(), {
    fetch: watching(seen, cut),
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
  });
  const client = new Client({ name: 'cluster-haproxy', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('through HAProxy in round robin over three replicas', () => {
  it('serves 30 SDK clients (25 v1 sessions, 5 v2 on 2026-07-28) x (initialize, list, 10 calls), relaying to owners', async () => {
    const seen: Seen[] = [];
    const v1 = async (n: number) => {
      const { client } = await v1Client(seen);
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
        for (let i = 0; i < 10; i++) expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `v1 ${n}.${i}` } }))).toBe(`v1 ${n}.${i}`);
      } finally {
        await client.close();
      }
    };
    const v2 = async (n: number) => {
      const client = new V2Client({ name: 'cluster-haproxy-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new V2Transport(c.url(), { fetch: watching(seen) }));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
        for (let i = 0; i < 10; i++) expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `v2 ${n}.${i}` } }))).toBe(`v2 ${n}.${i}`);
      } finally {
        await client.close();
      }
    };
    const outcomes = await Promise.allSettled([...Array.from({ length: 25 }, (_, n) => v1(n)), ...Array.from({ length: 5 }, (_, n) => v2(n))]);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);

    // Every replica served requests and owned sessions; most session requests were relayed to the owner.
    const sessions = new Set(seen.flatMap((s) => (s.session === undefined ? [] : [s.session])));
    expect(sessions.size).toBe(25);
    expect(new Set([...sessions].map((id) => c.ownerOf(id)))).toEqual(new Set(['r0', 'r1', 'r2']));
    expect(new Set(seen.map((s) => s.servedBy))).toEqual(new Set(['r0', 'r1', 'r2']));
    const calls = seen.filter((s) => s.rpc === 'tools/call' && s.session !== undefined);
    expect(calls).toHaveLength(250);
    expect(relayed(calls).length).toBeGreaterThan(50);
  }, 120_000);

  it('streams the progress of a call through a replica that does not own the session', async () => {
    const seen: Seen[] = [];
    const { client } = await v1Client(seen);
    try {
      // Round robin moves on with every request: within three calls one lands on a non-owner.
      for (let attempt = 0; attempt < 3 && relayed(seen.filter((s) => s.rpc === 'tools/call')).length === 0; attempt++) {
        const progress: number[] = [];
        const result = await client.callTool({ name: 'slow', arguments: { ms: 600, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
        expect(textOf(result)).toBe('done');
        expect(progress).toEqual([1, 2, 3]);
      }
      const [call] = relayed(seen.filter((s) => s.rpc === 'tools/call'));
      expect(call).toBeDefined();
      expect(call?.servedBy).not.toBe(c.ownerOf(call?.session ?? ''));
    } finally {
      await client.close();
    }
  }, 60_000);

  it('resumes an SSE answer cut mid-call with Last-Event-ID on another replica, which replays what was missed', async () => {
    const seen: Seen[] = [];
    const cut = { done: false };
    const { client } = await v1Client(seen, cut);
    try {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'slow', arguments: { ms: 1_200, steps: 4 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(cut.done).toBe(true);
      expect(textOf(result)).toBe('done');
      expect(progress).toEqual([1, 2, 3, 4]);
      const call = seen.find((s) => s.rpc === 'tools/call');
      const resume = seen.find((s) => s.method === 'GET');
      expect(resume, JSON.stringify(seen)).toBeDefined();
      // The resuming GET went to another replica than the cut POST (round robin), and at least one
      // of the two was relayed to the owner.
      expect(resume?.servedBy).not.toBe(call?.servedBy);
      expect(relayed([call as Seen, resume as Seen]).length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('takes DELETE on every replica, relayed to the owner', async () => {
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await rpc.initialize(c.url()));
    const servedBy: string[] = [];
    for (const s of sessions) {
      const res = await fetch(c.url(), { method: 'DELETE', headers: { 'mcp-session-id': s.id, 'mcp-protocol-version': s.protocolVersion } });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      servedBy.push(res.headers.get('x-served-by') ?? '');
    }
    expect(new Set(servedBy)).toEqual(new Set(['r0', 'r1', 'r2']));
    expect(sessions.some((s, i) => c.ownerOf(s.id) !== servedBy[i])).toBe(true);
    // Gone on its owner: every replica now answers 404 for each.
    for (const s of sessions) {
      for (const r of c.replicas) {
        const answer = await post(r.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'mcp-session-id': s.id });
        expect(answer.status).toBe(404);
      }
    }
  }, 60_000);

  it('takes the POSTs of a legacy SSE stream on every replica', async () => {
    const stream = await openLegacyStream(c.url('/servers/rec/sse'));
    try {
      expect(stream.endpoint.origin).toBe(c.lb.url.origin);
      const servedBy: string[] = [];
      const send = async (message: unknown) => {
        const res = await fetch(stream.endpoint, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(message) });
        await res.arrayBuffer();
        servedBy.push(res.headers.get('x-served-by') ?? '');
        return res.status;
      };
      expect(await send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } })).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ id: 1, result: { serverInfo: expect.anything() } });
      expect(await send({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
      for (let i = 2; i < 5; i++) {
        expect(await send({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `legacy ${i}` } } })).toBe(202);
        expect(await stream.nextMessage()).toMatchObject({ id: i, result: { content: [{ text: `legacy ${i}` }] } });
      }
      expect(new Set(servedBy)).toEqual(new Set(['r0', 'r1', 'r2']));
      expect(servedBy.some((r) => r !== c.ownerOf(stream.sessionId))).toBe(true);
    } finally {
      stream.close();
    }
  }, 60_000);
});
