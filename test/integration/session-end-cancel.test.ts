/**
 * Ending a session fails nothing silently: whatever ends it (DELETE, a closed legacy SSE stream,
 * a closed WebSocket in ws-downstream.test.ts), every request still in flight is cancelled
 * upstream before the upstream connection closes. The recorder fixture writes what reaches it to
 * a file, so the cancel is visible after the child is gone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startAggregateGateway } from '../support/aggregate.ts';
import { startTestGateway } from '../support/gateway.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { recorderServer, rpc, type Recorded } from '../support/recorder.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function recordingTarget() {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cancel-'));
  dirs.push(dir);
  const file = join(dir, 'received.ndjson');
  const base = recorderServer();
  return { file, target: { ...base, args: [...(base.args ?? []), `--record-to=${file}`] } };
}

/** Waits until the recorder has written a notifications/cancelled; returns every recorded message. */
async function cancelRecorded(file: string): Promise<Recorded[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (existsSync(file)) {
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Recorded);
      if (lines.some((m) => m.method === 'notifications/cancelled')) return lines;
    }
    if (Date.now() > deadline) throw new Error('no notifications/cancelled reached the upstream');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const slowCall = { method: 'tools/call', params: { name: 'slow', arguments: { ms: 20_000, steps: 20 }, _meta: { progressToken: 'p' } } };

describe('ending a session cancels its in-flight requests upstream', () => {
  it('on DELETE (Streamable HTTP)', async () => {
    const { file, target } = recordingTarget();
    const gw = await startTestGateway({ targets: { rec: target } });
    try {
      const session = await rpc.initialize(gw.mcpUrl());
      const res = await fetch(gw.mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session.id },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, ...slowCall }),
      });
      // The response turned into SSE at the first progress: the call is in flight upstream.
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      await reader.read();
      expect(await session.delete()).toBe(200);
      const seen = await cancelRecorded(file);
      const forwarded = seen.find((m) => m.method === 'tools/call');
      expect(seen.find((m) => m.method === 'notifications/cancelled')?.params).toMatchObject({
        requestId: forwarded?.id,
        reason: 'Session ended: deleted by the client',
      });
      // The client's stream still got its answer: an error, not silence.
      let text = '';
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      expect(text).toMatch(/"id":7,"error"/);
    } finally {
      await gw.close();
    }
  });

  it('when the legacy SSE stream closes', async () => {
    const { file, target } = recordingTarget();
    const gw = await startTestGateway({ targets: { rec: target } });
    try {
      const stream = await openLegacyStream(new URL('/sse', gw.url));
      await stream.post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
      await stream.nextMessage();
      await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(await stream.post({ jsonrpc: '2.0', id: 1, ...slowCall })).toBe(202);
      expect(await stream.nextMessage()).toMatchObject({ method: 'notifications/progress' });
      stream.close();
      const seen = await cancelRecorded(file);
      expect(seen.find((m) => m.method === 'notifications/cancelled')?.params).toMatchObject({
        requestId: seen.find((m) => m.method === 'tools/call')?.id,
        reason: 'Session ended: client closed the legacy SSE stream',
      });
    } finally {
      await gw.close();
    }
  });

  it('in an aggregate session (several targets behind /mcp), to the target that owns the call', async () => {
    const { file, target } = recordingTarget();
    const gw = await startAggregateGateway({ targets: { rec: target, other: recorderServer() } });
    try {
      const url = new URL('/mcp', gw.url);
      const session = await rpc.initialize(url);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session.id },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, ...slowCall, params: { ...slowCall.params, name: 'rec__slow' } }),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      await reader.read();
      expect(await session.delete()).toBe(200);
      const seen = await cancelRecorded(file);
      expect(seen.find((m) => m.method === 'notifications/cancelled')?.params).toMatchObject({
        requestId: seen.find((m) => m.method === 'tools/call')?.id,
        reason: 'Session ended: deleted by the client',
      });
    } finally {
      await gw.close();
    }
  });
});
