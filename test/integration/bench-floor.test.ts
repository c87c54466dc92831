/**
 * The floor of the benchmark (issue 34): floor-relay (bench/floor-relay.mjs, the least a stdio
 * gateway does) started as the benchmark starts it, spoken to over real HTTP: the wire it must
 * keep (initialize makes a session with a child of its own, each call answered with the client's
 * own id, a notification 202, DELETE ends the child, an unknown session 404), the checked load the
 * benchmark runs on it, and the relay's floor pair (a bare proxy in front of it, against it).
 * Correctness only: no timing is asserted. bench-smoke.test.ts checks the rest of the harness.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { httpConnector } from '../../bench/lib/clients.ts';
import { measureRelayFloor } from '../../bench/lib/cluster-scenarios.ts';
import { runLoad } from '../../bench/lib/load.ts';
import { killAll, startSystem, type RunningSystem } from '../../bench/lib/systems.ts';
import { descendantsOf, isAlive, waitUntilGone } from '../support/processes.ts';

let system: RunningSystem | undefined;
afterEach(async () => {
  await system?.stop();
  system = undefined;
  killAll();
});

const start = async () => {
  system = await startSystem('floor-relay', { sharedChildren: 2, nodeFlags: [] });
  return { url: system.url as string, pid: system.gatewayPid as number };
};

async function post(url: string, body: unknown, sid?: string): Promise<{ status: number; sid: string | null; json: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (sid !== undefined) headers['mcp-session-id'] = sid;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, sid: res.headers.get('mcp-session-id'), json: text === '' ? undefined : JSON.parse(text) };
}

const initialize = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const echo = (id: unknown, text: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });

describe('floor-relay', () => {
  it("answers initialize and echo calls with the client's own id, string or number, a child per session", async () => {
    const { url, pid } = await start();
    const init = await post(url, initialize('init-é'));
    expect(init.status).toBe(200);
    expect(init.json).toMatchObject({ id: 'init-é', result: { serverInfo: { name: 'bench-echo' } } });
    const sid = init.sid as string;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    const note = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
    expect(note).toEqual({ status: 202, sid: null, json: undefined });
    // The same client id twice in flight, a string and a number: each answer finds its own caller.
    const answers = await Promise.all([post(url, echo('a-1', 'one'), sid), post(url, echo('a-1', 'two'), sid), post(url, echo(7, 'three'), sid), post(url, echo(0, 'four'), sid)]);
    expect(answers.map((a) => [a.status, (a.json as { id: unknown }).id, (a.json as { result: { content: Array<{ text: string }> } }).result.content[0]?.text])).toEqual([
      [200, 'a-1', 'one'],
      [200, 'a-1', 'two'],
      [200, 7, 'three'],
      [200, 0, 'four'],
    ]);
    const other = await post(url, initialize(1));
    expect(other.sid).not.toBe(sid);
    expect(descendantsOf(pid).length).toBe(2);
  }, 60_000);

  it('ends the session and kills its child on DELETE; an unknown or ended session gets 404, none at all 400', async () => {
    const { url, pid } = await start();
    const { sid } = await post(url, initialize(1));
    const [child] = descendantsOf(pid);
    expect(child !== undefined && isAlive(child)).toBe(true);
    const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sid as string } });
    expect(del.status).toBe(200);
    expect(await waitUntilGone([child as number], 10_000)).toEqual([]);
    expect((await post(url, echo(2, 'x'), sid as string)).status).toBe(404);
    expect((await post(url, echo(3, 'x'), randomUUID())).json).toMatchObject({ error: { code: -32001 } });
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': randomUUID() } })).status).toBe(404);
    expect((await post(url, echo(4, 'x'))).status).toBe(400);
  }, 60_000);

  it('runs the checked load of the benchmark, and leaves no process when stopped', async () => {
    const { url, pid } = await start();
    const connector = httpConnector(url, 8);
    let children: number[] = [];
    try {
      const result = await runLoad(connector, { sessions: 2, inFlight: 4, bytes: 0, warmupMs: 50, durationMs: 20_000, maxCalls: 300, roots: [pid], gatewayPid: pid });
      expect(result.errors, result.firstError).toBe(0);
      expect(result.calls).toBeGreaterThanOrEqual(300);
      expect(result.serverCpu).toBeGreaterThan(0);
      await connector.open(); // left open: stopping the system must take its child too
      children = descendantsOf(pid);
      expect(children.length).toBe(1);
    } finally {
      await connector.close();
    }
    await system?.stop();
    system = undefined;
    expect(await waitUntilGone([pid, ...children], 10_000)).toEqual([]);
  }, 60_000);

  it("measures the relay's floor: calls through a bare proxy in front of floor-relay, and straight to it", async () => {
    const { subject, reference } = await measureRelayFloor({ sessions: 1, inFlight: 1, warmupMs: 50, durationMs: 60_000, maxCalls: 100, referenceFirst: false });
    for (const side of [subject, reference]) {
      expect(side.errors, side.firstError).toBe(0);
      expect(side.calls).toBeGreaterThanOrEqual(100);
      expect(side.serverCpu).toBeGreaterThan(0);
    }
  }, 120_000);
});
