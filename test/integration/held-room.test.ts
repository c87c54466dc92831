/**
 * Held 2026 sessions and room for 2025 clients (session/stateless/hosts.ts, session/limits.ts):
 * a caller that varies its declared capabilities cannot multiply held sessions, held sessions are
 * ended for room once idle past the floor (their own upstream stream does not keep them in use),
 * and a 2026 request that needs a held session when there is no room gets 503 + Retry-After.
 * Real sockets, real children (the benchmark's echo server, tagged so this file counts its own).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { fixture, post, rpc } from '../support/recorder.ts';
import { fileURLToPath } from 'node:url';

const ECHO = fileURLToPath(new URL('../../bench/echo-server.mjs', import.meta.url));
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'held-room', version: '1' } },
});
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

function echoTarget(tag: string) {
  return { command: process.execPath, args: [ECHO, `--tag=${tag}`] };
}

/** Living processes whose command line carries `--tag=<tag>`. */
function childrenTagged(tag: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`--tag=${tag}`)) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

async function until<T>(attempt: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const SAMPLING = [undefined, {}, { tools: {} }, { context: {} }, { tools: {}, context: {} }];
const ELICITATION = [undefined, {}, { url: {} }, { form: {}, url: {} }];
const ROOTS = [undefined, {}, { listChanged: true }];

/** The n-th (from 1) of 60 capability sets an upstream can tell apart (what it may ask differs). */
function capsOf(n: number): Record<string, unknown> {
  const i = n - 1;
  const picked = { sampling: SAMPLING[i % 5], elicitation: ELICITATION[Math.floor(i / 5) % 4], roots: ROOTS[Math.floor(i / 20) % 3] };
  return Object.fromEntries(Object.entries(picked).filter(([, value]) => value !== undefined));
}

/** `tools/list` as a 2026 client declaring the n-th distinct capability set. */
const listWithCaps = (url: URL, n: number) => modern(url, 'tools/list', {}, { id: n, meta: { [CAPS]: capsOf(n) } });

describe('held 2026 sessions and room for 2025 clients', () => {
  it('40 capability sets of one caller hold at most hostsPerCaller children; a 2025 client then gets in at once', async () => {
    const tag = randomUUID();
    const gw = await startTestGateway({ targets: { echo: echoTarget(tag) }, session: { maxChildrenPerTarget: 16 } });
    try {
      let most = 0;
      for (let n = 1; n <= 40; n++) {
        const answer = await listWithCaps(gw.mcpUrl('echo'), n);
        expect(answer.status, answer.text).toBe(200);
        expect(answer.json.result).toBeDefined();
        most = Math.max(most, childrenTagged(tag));
      }
      // Each new set took the place of the caller's idle one: 4 (hostsPerCaller), plus one stopping.
      expect(most).toBeLessThanOrEqual(5);
      const init = await post(gw.mcpUrl('echo'), INIT);
      expect(init.status).toBe(200);
      expect(init.json.result).toBeDefined();
      expect(init.headers.get('mcp-session-id')).toBeTruthy();
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('40 variations inside one declared capability are one capability set: one held session, one child', async () => {
    const tag = randomUUID();
    const gw = await startTestGateway({ targets: { echo: echoTarget(tag) } });
    try {
      for (let n = 1; n <= 40; n++) {
        const declared = { sampling: { variant: n, [`x${n}`]: { deep: 'y'.repeat(n) } }, elicitation: { form: { n } } };
        const answer = await modern(gw.mcpUrl('echo'), 'tools/list', {}, { id: n, meta: { [CAPS]: declared } });
        expect(answer.status, answer.text).toBe(200);
      }
      expect(childrenTagged(tag)).toBe(1);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('held sessions that fill the children are ended for a 2025 client once idle past the floor, not before', async () => {
    const tag = randomUUID();
    const gw = await startTestGateway({
      targets: { echo: echoTarget(tag) },
      session: { maxChildrenPerTarget: 4, evictIdleMs: 1_000, stateless: { hostsPerCaller: 4, hostIdleMs: 600_000, inputWaitMs: 120_000, maxListenStreams: 16, maxParkedPerCaller: 16, maxParked: 1_024 } },
    });
    try {
      const lists = await Promise.all([1, 2, 3, 4].map((n) => listWithCaps(gw.mcpUrl('echo'), n)));
      for (const answer of lists) expect(answer.status, answer.text).toBe(200);
      expect(childrenTagged(tag)).toBe(4);
      // Used a moment ago: not idle yet, so the 2025 client is refused, at once, with when to come back.
      const started = performance.now();
      const refused = await post(gw.mcpUrl('echo'), INIT);
      const ms = performance.now() - started;
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json.error).toMatchObject({ data: { code: 'GW_SESSION_LIMIT', kind: 'target-children' } });
      expect(ms).toBeLessThan(2_000);
      // Past the floor one held session makes room (its own upstream stream does not keep it busy).
      const init = await until(async () => {
        const answer = await post(gw.mcpUrl('echo'), INIT);
        return answer.status === 200 ? answer : undefined;
      }, 'a 2025 session');
      expect(init.headers.get('mcp-session-id')).toBeTruthy();
      // The caller's next 2026 request still gets an answer (on a remaining held session).
      expect((await listWithCaps(gw.mcpUrl('echo'), 1)).status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('a fifth capability set while the caller\'s four held sessions are all at work: 503 held-sessions, the calls finish', async () => {
    const slowServer = { command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] };
    const gw = await startTestGateway({ targets: { slow: slowServer } });
    try {
      const url = gw.mcpUrl('slow');
      const call = (n: number) => modern(url, 'tools/call', { name: 'slow', arguments: { ms: 3_000 } }, { id: n, meta: { [CAPS]: capsOf(n) } });
      const calls = [1, 2, 3, 4].map(call);
      // Wait until all four run (each on a held session of its own capability set).
      await until(async () => (((await (await fetch(new URL('/readyz', gw.url))).json()) as { inflight: number }).inflight >= 4 ? true : undefined), 'four calls in flight');
      const refused = await listWithCaps(url, 5);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.json).toMatchObject({ id: 5, error: { data: { code: 'GW_SESSION_LIMIT', kind: 'held-sessions', limit: 4 } } });
      for (const answer of await Promise.all(calls)) expect(answer.json.result).toBeDefined();
      // Once they are idle, the fifth set takes the place of one of them.
      expect((await listWithCaps(url, 5)).status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it('a 2026 request that needs a held session when the children are in use gets 503 + Retry-After, its own id', async () => {
    const tag = randomUUID();
    const gw = await startTestGateway({ targets: { echo: echoTarget(tag) }, session: { maxChildrenPerTarget: 1 } });
    try {
      const session = await rpc.initialize(gw.mcpUrl('echo'));
      const refused = await modern(gw.mcpUrl('echo'), 'tools/list', {}, { id: 'no-room' });
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json).toMatchObject({ id: 'no-room', error: { data: { code: 'GW_SESSION_LIMIT', kind: 'target-children', target: 'echo' } } });
      // The 2025 client saw nothing.
      expect((await session.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 60_000);
});
