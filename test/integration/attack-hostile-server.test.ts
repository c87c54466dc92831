/**
 * The outside probe of issue 30, rerun on the landed build against a hostile upstream
 * (fixtures/attacker-server.mjs) reached by every path: what a server asks the client
 * (sampling, elicitation) and every result it sends pass redaction on every path and era; a
 * SEP-2663 task's result through the aggregate too; a prompt denied by policy stays denied in
 * every spelling, also in completions; resource URIs the server lists in look-alike spellings of
 * a denied folder are hidden; subscriptions and completions naming them are refused; the audit
 * trail names what was refused and asked. The gateway: support/attack-gateway.ts.
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

describe('what a hostile server asks the client is redacted on every path', () => {
  for (const [path, prefix] of [['/servers/hostile/mcp', ''], ['/mcp', 'hostile__'], ['/groups/g/mcp', 'hostile__'], ['/virtual/v/mcp', '']] as const) {
    it(`sampling and elicitation on ${path}`, async () => {
      const { client, seen } = await h.sdkClient(path, { sampling: {}, elicitation: {} });
      try {
        for (const tool of ['ask_sample', 'ask_elicit']) {
          const result = await client.callTool({ name: `${prefix}${tool}`, arguments: {} });
          expect(JSON.stringify(result), tool).not.toContain(KEY);
        }
        expect(seen).toHaveLength(2);
        expect(JSON.stringify(seen)).toContain('[REDACTED]');
        expect(JSON.stringify(seen)).not.toContain(KEY);
      } finally {
        await client.close();
      }
    });
  }

  it('a 2026 request gets the question as input_required, redacted', async () => {
    for (const [path, name] of [['/servers/hostile/mcp', 'ask_sample'], ['/mcp', 'hostile__ask_elicit']] as const) {
      const caps = { sampling: {}, elicitation: {} };
      const a = await modern(new URL(path, h.gw.url), 'tools/call', { name, arguments: {} }, { headers: { authorization: `Bearer ${ALICE}` }, meta: { 'io.modelcontextprotocol/clientCapabilities': caps } });
      expect(a.text, `${path}: ${a.text}`).toContain('input_required');
      expect(a.text).not.toContain(KEY);
    }
  });
});

describe('results are redacted in every block, on every path and era, tasks included', () => {
  it('text, embedded resources and structuredContent', async () => {
    const m = h.matrix();
    const drivers: [Driver, string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), 'leak'],
      [await sessionDriver(m, '/mcp', ALICE), 'hostile__leak'],
      [await wsDriver(m, '/servers/hostile/ws', ALICE), 'leak'],
      [await sseDriver(m, '/servers/hostile/sse', ALICE), 'leak'],
      [modernDriver(m, '/mcp', ALICE), 'hostile__leak'],
      [modernDriver(m, '/virtual/v/mcp', ALICE), 'leak'],
    ];
    try {
      for (const [d, name] of drivers) {
        for (const tool of [name, name.replace('leak', 'leak_big')]) {
          const a = await d.request('tools/call', { name: tool, arguments: {} });
          expect(JSON.stringify(a.body.result ?? null), tool).toContain('[REDACTED]');
          expect(JSON.stringify(a.body), tool).not.toContain(KEY);
        }
      }
    } finally {
      await Promise.all(drivers.map(([d]) => d.close()));
    }
  });

  it("a SEP-2663 task's result through the aggregate (2025 session and 2026 request)", async () => {
    const { client } = await h.sdkClient('/mcp', { extensions: EXT });
    try {
      const created = await client.request({ method: 'tools/call', params: { name: 'hostile__leak_task', arguments: {} } }, ANY);
      expect(created.resultType).toBe('task');
      const taskId = created.taskId as string;
      const done = await client.request({ method: 'tasks/get', params: { taskId } }, ANY);
      expect(done.status).toBe('completed');
      expect(JSON.stringify(done)).toContain('[REDACTED]');
      expect(JSON.stringify(done)).not.toContain(KEY);
    } finally {
      await client.close();
    }
    // The same member on its own path (no sealed ids there): its task result is never handed out in clear.
    const single = await h.sdkClient('/servers/hostile/mcp', { extensions: EXT });
    try {
      const created = await single.client.request({ method: 'tools/call', params: { name: 'leak_task', arguments: {} } }, ANY);
      expect(JSON.stringify(created)).not.toContain(KEY);
      if (typeof created.taskId === 'string') {
        const polled = await single.client.request({ method: 'tasks/get', params: { taskId: created.taskId } }, ANY).catch((err: unknown) => ({ refused: String(err) }));
        expect(JSON.stringify(polled)).not.toContain(KEY);
      }
    } finally {
      await single.client.close();
    }
    const headers = { authorization: `Bearer ${CAROL}` };
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { extensions: EXT } };
    const created = await modern(new URL('/mcp', h.gw.url), 'tools/call', { name: 'hostile__leak_task', arguments: {} }, { headers, meta });
    const taskId = (created.json.result as Record<string, unknown> | undefined)?.taskId as string;
    expect(taskId, created.text).toMatch(/^task1\./);
    const done = await modern(new URL('/mcp', h.gw.url), 'tasks/get', { taskId }, { headers, meta });
    expect(done.text).toContain('completed');
    expect(done.text).not.toContain(KEY);
  });
});

describe('a prompt denied by policy, in every spelling and every place it is named', () => {
  it('prompts/get and completion/complete refuse it; lists hide it', async () => {
    const m = h.matrix();
    const rows: [Driver, (n: string) => string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), (n) => n],
      [await sessionDriver(m, '/mcp', ALICE), (n) => `hostile__${n}`],
      [await wsDriver(m, '/servers/hostile/ws', ALICE), (n) => n],
      [modernDriver(m, '/servers/hostile/mcp', ALICE), (n) => n],
      [await sessionDriver(m, '/virtual/v/mcp', ALICE), (n) => (n.toLowerCase() === 'admin_secret' ? 'boss' : n)],
    ];
    try {
      for (const [d, name] of rows) {
        const listed = await d.request('prompts/list', {});
        expect(JSON.stringify(listed.body)).not.toMatch(/admin_secret|boss/);
        for (const spelling of ['admin_secret', 'ADMIN_SECRET', '\uFF41dmin_secret', 'admin_secret ']) {
          const got = await d.request('prompts/get', { name: name(spelling), arguments: {} });
          expect(errorOf(got), `${name(spelling)}: ${JSON.stringify(got.body)}`).toBeDefined();
          const completed = await d.request('completion/complete', { ref: { type: 'ref/prompt', name: name(spelling) }, argument: { name: 'a', value: '' } });
          expect(errorOf(completed), `completion ${name(spelling)}: ${JSON.stringify(completed.body)}`).toBeDefined();
        }
      }
    } finally {
      await Promise.all(rows.map(([d]) => d.close()));
    }
    const leaked = h.received().filter((r) => ['prompts/get', 'completion/complete'].includes(r.method ?? '') && /admin|ＡＤＭＩＮ|ａdmin/i.test(JSON.stringify(r.params)));
    expect(leaked).toEqual([]);
  });
});

describe('resource URIs a hostile server lists, subscriptions and completions', () => {
  it('look-alike spellings of a denied folder are hidden from lists and refused for subscribe and completion', async () => {
    const m = h.matrix();
    const rows: [Driver, (u: string) => string][] = [
      [await sessionDriver(m, '/servers/hostile/mcp', ALICE), (u) => u],
      [await sessionDriver(m, '/mcp', ALICE), (u) => `hostile+${u}`],
      [await sseDriver(m, '/servers/hostile/sse', ALICE), (u) => u],
      [modernDriver(m, '/servers/hostile/mcp', ALICE), (u) => u],
      [await sessionDriver(m, '/virtual/v/mcp', ALICE), (u) => `hostile+${u}`],
    ];
    try {
      for (const [d, uri] of rows) {
        const listed = JSON.stringify((await d.request('resources/list', {})).body);
        expect(listed).toContain('public/x.txt');
        expect(listed, listed).not.toMatch(/secret|%73ecret/i);
        for (const spelling of [`file://${ROOT}/public/../secret/a.txt`, `FILE://${ROOT}/secret/b.txt`, `file://localhost${ROOT}/%73ecret/c.txt`]) {
          const sub = await d.request('resources/subscribe', { uri: uri(spelling) });
          expect(errorOf(sub), `subscribe ${spelling}: ${JSON.stringify(sub.body)}`).toBeDefined();
          const completed = await d.request('completion/complete', { ref: { type: 'ref/resource', uri: uri(spelling) }, argument: { name: 'a', value: '' } });
          expect(errorOf(completed), `completion ${spelling}: ${JSON.stringify(completed.body)}`).toBeDefined();
        }
      }
    } finally {
      await Promise.all(rows.map(([d]) => d.close()));
    }
    const leaked = h.received().filter((r) => ['resources/subscribe', 'completion/complete'].includes(r.method ?? '') && /secret/i.test(JSON.stringify(r.params)));
    expect(leaked).toEqual([]);
  });
});

describe('the audit trail', () => {
  it('names the refused prompt and the answered server-to-client requests', () => {
    const lines = h.audit.filter((l) => l.includes('"audit":true'));
    expect(lines.some((l) => l.includes('"prompt":"admin_secret"') && l.includes('"outcome":"denied"'))).toBe(true);
    expect(lines.some((l) => l.includes('"method":"elicitation/create"') && l.includes('"server":"hostile"'))).toBe(true);
    // A SEP-2663 poll's record names the tool whose result it handed out.
    expect(lines.some((l) => l.includes('"method":"tasks/get"') && l.includes('"tool":"leak_task"') && l.includes('"server":"hostile"')), lines.filter((l) => l.includes('tasks/get')).join('\n')).toBe(true);
  });
});
