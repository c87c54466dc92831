/**
 * The chain's matrix (issue 30): every path to one target x every judgment x the look-alike
 * spellings. One gateway (support/chain-matrix.ts) serves every row; each row is a path with its
 * own principal (so rate-limit buckets do not mix), its own spelling of names and URIs, and one
 * client of its transport. The next surface adds a row here, not a hole.
 *
 * Judgments: a policy deny on a tool (written with the override's name; a virtual pick of the
 * tool carries a third) and on a resource; step-up on a tool and on a resource (the challenge
 * names every scope the request needs); the per-tool rate limit; a request hook's deny; a
 * response's redaction; the audit line. Whatever is refused never reaches the upstream.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { eventually } from '../support/pinning.ts';
import { KEY, MATRIX_SCOPES, TOOL_BURST, modernDriver, sessionDriver, sseDriver, startMatrixGateway, TEXTS, wsDriver, type Answer, type Driver, type MatrixGateway } from '../support/chain-matrix.ts';

let as: AuthorizationServer;
let m: MatrixGateway;

beforeAll(async () => {
  const clients = ROWS.flatMap((row) => [clientOf(row), `${clientOf(row)}-wide`, `${clientOf(row)}-pin`]);
  as = await startAuthorizationServer({ scopes: MATRIX_SCOPES, clients });
  m = await startMatrixGateway(as);
});

afterAll(async () => {
  await m?.close();
  await as?.close();
});

interface Row {
  readonly name: string;
  readonly path: string;
  /** The path to the rug-pull target, and what it calls its `echo`. */
  readonly rug: { readonly path: string; readonly echo: string };
  open(m: MatrixGateway, path: string, token: string): Promise<Driver> | Driver;
  tool(name: string): string;
  uri(uri: string): string;
  /** HTTP 403 with a challenge can be sent (a 2025 POST, a 2026 request); else the error at 200. */
  readonly http: boolean;
}

/** Each row's own principal: its rate-limit buckets and audit lines are its own. */
const clientOf = (row: Row) => `matrix-${row.name.replace(/\W+/g, '-')}`;
const own = (name: string) => name;
const prefixed = (name: string) => `files__${name}`;
const encoded = (uri: string) => `files+${uri}`;

const ROWS: Row[] = [
  { name: 'server path', path: '/servers/files/mcp', rug: { path: '/servers/rug/mcp', echo: 'echo' }, open: sessionDriver, tool: own, uri: own, http: true },
  { name: 'aggregate', path: '/mcp', rug: { path: '/mcp', echo: 'rug__echo' }, open: sessionDriver, tool: prefixed, uri: encoded, http: true },
  { name: 'group', path: '/groups/g/mcp', rug: { path: '/groups/g/mcp', echo: 'rug__echo' }, open: sessionDriver, tool: prefixed, uri: encoded, http: true },
  {
    name: 'virtual server',
    path: '/virtual/kit/mcp',
    rug: { path: '/virtual/kit/mcp', echo: 'rug_echo' },
    open: sessionDriver,
    tool: (n) => (n === 'remove' ? 'wipe' : n),
    uri: encoded,
    http: true,
  },
  { name: 'WebSocket', path: '/servers/files/ws', rug: { path: '/servers/rug/ws', echo: 'echo' }, open: wsDriver, tool: own, uri: own, http: false },
  { name: 'legacy SSE', path: '/servers/files/sse', rug: { path: '/servers/rug/sse', echo: 'echo' }, open: sseDriver, tool: own, uri: own, http: false },
  { name: '2026 request', path: '/servers/files/mcp', rug: { path: '/servers/rug/mcp', echo: 'echo' }, open: modernDriver, tool: own, uri: own, http: true },
];

/** Spellings of `<root>/<dir>/x.txt` that a file server reads as that file. */
function spellings(root: string, dir: string): string[] {
  const [first, ...rest] = dir;
  return [
    `file://${root}/${dir}/x.txt`,
    `file://${root}/public/../${dir}/x.txt`,
    `file://${root}/./${dir}/./x.txt`,
    `file://${root}//${dir}//x.txt`,
    `file://localhost${root}/${dir}/x.txt`,
    `file://${root}/%${(first as string).charCodeAt(0).toString(16)}${rest.join('')}/x.txt`,
    `FILE://${root}/${dir}/x.txt`,
    `file://${root}/public/%2e%2e/${dir}/x.txt`,
    `file://${root}/public/%2E%2E/${dir}/x.txt`,
    `file:${root}/${dir}/x.txt`,
    `file://\uFF4Cocalhost${root}/${dir}/x.txt`,
    `file://localhost.${root}/${dir}/x.txt`,
  ];
}

/** Spellings no rule can be judged on: refused outright, whatever they name. */
const unjudgeable = (root: string) => [`file://${root}/public%2F..%2Fsecret/x.txt`, `file://${root}/public/..%5Csecret/x.txt`, `file://${root}/%zz/x.txt`];

const errorOf = (a: Answer) => a.body.error as { code: number; message: string; data?: Record<string, any> } | undefined;
const textIn = (a: Answer) => JSON.stringify(a.body.result ?? {});

describe.each(ROWS)('the chain on $name', (row) => {
  const client = clientOf(row);
  let narrow: Driver;
  let wide: Driver;

  beforeAll(async () => {
    narrow = await row.open(m, row.path, await m.token(client, row.path, 'mcp'));
    wide = await row.open(m, row.path, await m.token(`${client}-wide`, row.path, 'mcp files:read files:write'));
  });
  afterAll(async () => {
    await narrow?.close();
    await wide?.close();
  });

  it('a policy deny written with the override name refuses the tool under every name and spelling it carries', async () => {
    for (const name of [row.tool('remove'), row.tool('remove').toUpperCase(), row.tool('\uFF52emove')]) {
      const a = await wide.request('tools/call', { name, arguments: { path: `policy-${client}` } });
      expect(errorOf(a), `${name}: ${JSON.stringify(a.body)}`).toBeDefined();
    }
    expect(m.received().filter((r) => JSON.stringify(r.params ?? {}).includes(`policy-${client}`))).toEqual([]);
  });

  it('a policy deny on a resource holds for every spelling of its URI; unjudgeable spellings are refused', async () => {
    for (const uri of [...spellings(m.root, 'secret'), ...unjudgeable(m.root)]) {
      const a = await wide.request('resources/read', { uri: row.uri(uri) });
      expect(errorOf(a), `${uri}: ${JSON.stringify(a.body)}`).toBeDefined();
      expect(textIn(a)).not.toContain(TEXTS.secret);
    }
    const served = await wide.request('resources/read', { uri: row.uri(`file://${m.root}/public/x.txt`) });
    expect(textIn(served)).toContain(TEXTS.public);
  });

  it('step-up on a resource: every spelling needs the scope; the challenge names the base scope too', async () => {
    for (const uri of spellings(m.root, 'private')) {
      const a = await narrow.request('resources/read', { uri: row.uri(uri) });
      expect(errorOf(a)?.data, `${uri}: ${JSON.stringify(a.body)}`).toMatchObject({ code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:read'] });
      if (row.http) expect(a.challenge).toContain('scope="mcp files:read"');
      expect(textIn(a)).not.toContain(TEXTS.private);
    }
    expect(textIn(await wide.request('resources/read', { uri: row.uri(`file://${m.root}/public/../private/x.txt`) }))).toContain(TEXTS.private);
  });

  it('step-up on a tool, in every case and width', async () => {
    const exact = await narrow.request('tools/call', { name: row.tool('echo'), arguments: { text: `stepup-${client}` } });
    expect(errorOf(exact)?.data).toMatchObject({ code: 'GW_STEP_UP_REQUIRED', requiredScopes: ['mcp', 'files:write'] });
    // A look-alike needs the scope too; where the gateway resolves names itself (an aggregate's
    // table, a virtual server's picks) it is no name at all: refused before any judgment.
    for (const name of ['ECHO', '\uFF45cho', ' echo']) {
      const a = await narrow.request('tools/call', { name: row.tool(name), arguments: { text: `stepup-${client}` } });
      expect(['GW_STEP_UP_REQUIRED', 'GW_UNKNOWN_TOOL'], `${name}: ${JSON.stringify(a.body)}`).toContain(errorOf(a)?.data?.code);
    }
    expect(m.received().filter((r) => JSON.stringify(r.params ?? {}).includes(`stepup-${client}`))).toEqual([]);
  });

  it('a request hook denies; a response is redacted; the audit line names the call', async () => {
    const denied = await wide.request('tools/call', { name: row.tool('secret'), arguments: { text: 'deny-me' } });
    expect(errorOf(denied)?.data?.code).toBe('GW_HOOK_DENIED');
    const redacted = await wide.request('tools/call', { name: row.tool('secret'), arguments: {} });
    expect(textIn(redacted)).toContain('[REDACTED]');
    expect(textIn(redacted)).not.toContain(KEY);
    const lines = m.audit.filter((l) => l.includes('"audit":true') && l.includes(`${client}-wide`) && /"tool":"(files__)?secret"/.test(l));
    expect(lines.length, m.audit.slice(-5).join('\n')).toBeGreaterThanOrEqual(2);
    expect(lines.some((l) => l.includes('"outcome":"ok"') && l.includes('"target":"files"'))).toBe(true);
  });

  it('the per-tool rate limit holds, whatever the path calls the tool', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i <= TOOL_BURST; i++) answers.push(await wide.request('tools/call', { name: row.tool('limited'), arguments: {} }));
    expect(answers.slice(0, TOOL_BURST).every((a) => errorOf(a) === undefined)).toBe(true);
    expect(errorOf(answers[TOOL_BURST] as Answer)?.data?.code).toBe('GW_RATE_LIMITED');
  });
});

/** tasks/* (2025-11-25): a task's result is judged as the call that made it, and only its session may name it. */
const TASK_ROWS = ROWS.filter((row) => ['server path', 'WebSocket', 'legacy SSE'].includes(row.name));

describe.each(TASK_ROWS)('tasks/* on $name', (row) => {
  const client = `${clientOf(row)}-tasks`;
  let mine: Driver;
  let theirs: Driver;

  beforeAll(async () => {
    mine = await row.open(m, row.path, await m.token(`${clientOf(row)}-wide`, row.path, 'mcp files:read files:write'));
    theirs = await row.open(m, row.path, await m.token(clientOf(row), row.path, 'mcp'));
  });
  afterAll(async () => {
    await mine?.close();
    await theirs?.close();
  });

  it("a task's result passes the response hook, redaction and the audit line of the call that created it", async () => {
    const topic = `topic-${client}`;
    const created = await mine.request('tools/call', { name: 'research', arguments: { topic }, task: { ttl: 60000 } });
    const taskId = created.body.result?.task?.taskId as string;
    expect(taskId, JSON.stringify(created.body)).toMatch(/^task-/);
    expect((await mine.request('tasks/get', { taskId })).body.result).toMatchObject({ taskId, status: 'completed' });
    const result = await mine.request('tasks/result', { taskId });
    expect(textIn(result)).toContain(topic);
    expect(textIn(result)).toContain('[REDACTED]');
    expect(textIn(result)).not.toContain(KEY);
    const asked = m.hooked.filter((h) => h.phase === 'response' && h.method === 'tools/call' && h.params?.arguments?.topic === topic && JSON.stringify(h.result).includes(KEY));
    expect(asked, 'the response hook saw the task result as the call').toHaveLength(1);
    expect(m.audit.some((l) => l.includes('"method":"tasks/result"') && l.includes('"tool":"research"') && l.includes('"target":"files"') && l.includes('"outcome":"ok"'))).toBe(true);
    const listed = await mine.request('tasks/list', {});
    expect((listed.body.result?.tasks as { taskId: string }[]).map((t) => t.taskId)).toContain(taskId);

    // Another session (another principal) names it: refused, and nothing reaches the upstream.
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const foreign = await theirs.request(method, { taskId });
      expect(errorOf(foreign)?.data?.code, `${method}: ${JSON.stringify(foreign.body)}`).toBe('GW_UNKNOWN_TASK');
    }
    const theirList = await theirs.request('tasks/list', {});
    expect((theirList.body.result?.tasks as { taskId: string }[] | undefined)?.map((t) => t.taskId) ?? []).not.toContain(taskId);
  });

  it('an unknown task id is refused before the upstream', async () => {
    const taskId = `task-nobody-${client}`;
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect(errorOf(await mine.request(method, { taskId }))?.data?.code).toBe('GW_UNKNOWN_TASK');
    }
    expect(errorOf(await mine.request('tasks/result', {}))?.data?.code).toBe('GW_UNKNOWN_TASK');
    expect(m.received().filter((r) => JSON.stringify(r.params ?? {}).includes(taskId))).toEqual([]);
  });
});

describe('server-to-client requests (an upstream asks the client)', () => {
  it("what the upstream asks passes its target's redaction, and its answer gets an audit line", async () => {
    const path = '/servers/files/mcp';
    const token = await m.token('matrix-server-path-wide', path, 'mcp files:read files:write');
    const transport = new StreamableHTTPClientTransport(new URL(path, m.gw.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
    const seen: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test' };
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'ask', arguments: {} });
      expect(JSON.stringify(result)).toContain('sampled');
      expect(JSON.stringify(seen)).toContain('[REDACTED]');
      expect(JSON.stringify(seen)).not.toContain(KEY);
      expect(m.audit.some((l) => l.includes('"direction":"server-to-client"') && l.includes('"method":"sampling/createMessage"') && l.includes('"target":"files"') && l.includes('"outcome":"ok"'))).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('pinning (block) on every path', () => {
  const drivers: Driver[] = [];
  afterAll(async () => {
    await Promise.all(drivers.map((d) => d.close()));
  });

  it('a changed definition is refused on every path once the upstream says it changed', async () => {
    const call = (d: Driver, row: Row, text: string) => d.request('tools/call', { name: row.rug.echo, arguments: { text } });
    for (const row of ROWS) {
      const d = await row.open(m, row.rug.path, await m.token(`${clientOf(row)}-pin`, row.rug.path, 'mcp'));
      drivers.push(d);
      // First sight: pinned and served.
      expect(textIn(await call(d, row, 'first')), row.name).toContain('echo: first');
    }
    writeFileSync(join(m.root, 'rug.state'), 'inject');
    for (const [i, row] of ROWS.entries()) {
      const d = drivers[i] as Driver;
      // The path's own upstream said list_changed and the gateway read the list again: echo is withheld.
      await eventually(`${row.name} withholding the changed echo`, async () => {
        const tools = (await d.request('tools/list', {})).body.result?.tools as { name: string }[] | undefined;
        return tools !== undefined && !tools.some((t) => t.name === row.rug.echo) ? true : undefined;
      });
      const refused = await call(d, row, 'after');
      expect(errorOf(refused)?.data, `${row.name}: ${JSON.stringify(refused.body)}`).toMatchObject({ code: 'GW_DEFINITION_CHANGED', target: 'rug', kind: 'tool', name: 'echo' });
    }
  });
});
