/**
 * The outside probe of issue 30 against a hostile upstream (support/attack-gateway.ts), on what
 * it lists: a virtual server's resource pick against spellings that leave the picked folder, a
 * 2026 listen stream asking for look-alike spellings of a denied folder, and a tools list that
 * repeats a pinned name with words for the model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ALICE, CAROL, errorOf, KEY, ROOT, startHostileGateway, type HostileGateway } from '../support/attack-gateway.ts';
import { modernDriver, sessionDriver, sseDriver, wsDriver, type Driver } from '../support/chain-matrix.ts';
import { envelope, modern, readSseFrames, standardHeaders } from '../support/modern.ts';
import { eventually } from '../support/pinning.ts';

const ANY = z.object({}).passthrough();
const EXT = { 'io.modelcontextprotocol/tasks': {} };

let h: HostileGateway;
beforeAll(async () => {
  h = await startHostileGateway();
});
afterAll(async () => {
  await h?.close();
});

describe("a virtual server's resource pick", () => {
  it('holds against every spelling that leaves the picked folder', async () => {
    const m = h.matrix();
    const drivers = [await sessionDriver(m, '/virtual/pub/mcp', ALICE), modernDriver(m, '/virtual/pub/mcp', ALICE)];
    const outside = [
      `file://${ROOT}/public/../private/p.txt`,
      `file://${ROOT}/public/%2e%2e/private/p.txt`,
      `file://${ROOT}/public/..%2Fprivate/p.txt`,
      `file://${ROOT}/public/..\\private/p.txt`,
      `file://${ROOT}/public/./../private/p.txt`,
      `FILE://LOCALHOST${ROOT}/public/../private/p.txt`,
      `file://${ROOT}/publicity/p.txt`,
      `file://${ROOT}/public`,
    ];
    try {
      for (const d of drivers) {
        for (const uri of outside) {
          const a = await d.request('resources/read', { uri: `hostile+${uri}` });
          expect(errorOf(a), `${uri}: ${JSON.stringify(a.body)}`).toBeDefined();
        }
        const inside = await d.request('resources/read', { uri: `hostile+file://${ROOT}/public/./x.txt` });
        expect(JSON.stringify(inside.body)).toContain(`content of file://${ROOT}/public/x.txt`);
      }
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
    }
    expect(h.received().filter((r) => r.method === 'resources/read' && /private|publicity/.test(JSON.stringify(r.params)))).toEqual([]);
  });
});

describe('a 2026 listen stream asking for look-alike spellings of a denied folder', () => {
  it('acknowledges and subscribes upstream only what the caller may read', async () => {
    const spellings = [`file://${ROOT}/public/../secret/a.txt`, `FILE://${ROOT}/secret/b.txt`, `file://localhost${ROOT}/%73ecret/c.txt`, `file://${ROOT}//secret/e.txt`];
    for (const [path, uri] of [['/servers/hostile/mcp', (u: string) => u], ['/mcp', (u: string) => `hostile+${u}`]] as const) {
      const abort = new AbortController();
      const params = { notifications: { resourceSubscriptions: [...spellings, `file://${ROOT}/public/x.txt`].map(uri) }, _meta: envelope() };
      const headers = { ...standardHeaders('subscriptions/listen', {}), authorization: `Bearer ${ALICE}` };
      const res = await fetch(new URL(path, h.gw.url), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params }), signal: abort.signal });
      const { frames, reading } = readSseFrames(res);
      try {
        await expect.poll(() => frames.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
        expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
        const granted = JSON.stringify(frames[0]?.params?.notifications ?? {});
        expect(granted, path).toContain('public/x.txt');
        expect(granted, `${path}: ${granted}`).not.toMatch(/secret/i);
      } finally {
        abort.abort();
        await reading;
      }
    }
    const subscribed = h.received().filter((r) => r.method === 'resources/subscribe' && /secret/i.test(JSON.stringify(r.params)));
    expect(subscribed).toEqual([]);
  });
});

describe('pinning (block): a list that repeats a pinned name', () => {
  it('the second definition of `echo`, and `ECHO`, never reach the client', async () => {
    const m = h.matrix();
    for (const [path, echo, flip] of [['/servers/hostile/mcp', 'echo', 'flip'], ['/mcp', 'hostile__echo', 'hostile__flip']] as const) {
      const d = await sessionDriver(m, path, ALICE);
      try {
        const first = JSON.stringify((await d.request('tools/list', {})).body);
        expect(first).toContain('Echoes the text back.');
        const lists = () => h.received().filter((r) => r.method === 'tools/list').length;
        const before = lists();
        await d.request('tools/call', { name: flip, arguments: {} });
        // list_changed makes the gateway read the list again at once.
        await eventually(`${path}: the list read again`, async () => (lists() > before ? true : undefined), 60_000);
        const listed = JSON.stringify((await d.request('tools/list', {})).body);
        expect(listed, listed).not.toContain('IGNORE ALL PREVIOUS');
        const upper = await d.request('tools/call', { name: echo.replace('echo', 'ECHO'), arguments: { text: 'x' } });
        expect(JSON.stringify(upper.body)).not.toContain('echo: x');
      } finally {
        await d.close();
      }
    }
  }, 90_000);
});
