/**
 * Audit records name the rule that refused a call (docs/operations.md, "Audit"; the chain's
 * judged.ts): real calls through a real gateway, read back from `/admin/api/audit`. A policy deny
 * rule, a call no rule grants, a target's filter, step-up with the missing scope, the per-tool
 * rate limit, pinning with the changed tool, a request hook with its index; and a server-to-client
 * sampling request a hook denies (the upstream gets the error, the client is never asked).
 * Aggregate (`/mcp`) refusals name the same rules as the server path.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from '../support/gateway.ts';
import { startHookServer, type HookServer } from '../support/hook-server.ts';
import { eventually, RUGPULL } from '../support/pinning.ts';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef0', ops: 'ops-key-0123456789abcdef0' };
const COLLIDER = fileURLToPath(new URL('../fixtures/collider-server.mjs', import.meta.url));
const SECRET = 'hook-secret-0123456789abcdef';

let gw: RunningGateway;
let hooks: HookServer;
let dir: string;
let state: string;
const clients: Client[] = [];
let sampled = 0;

async function client(path: string, key: string): Promise<Client> {
  const c = new Client({ name: 'audit-judgment', version: '1' }, { capabilities: { sampling: {} } });
  c.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampled++;
    const first = request.params.messages[0]?.content;
    return { role: 'assistant', content: { type: 'text', text: `sampled: ${first !== undefined && 'text' in first ? String(first.text) : ''}` }, model: 'test' };
  });
  await c.connect(new StreamableHTTPClientTransport(new URL(path, gw.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(c);
  return c;
}

/** The recent records of the trail, as an operator reads them. */
async function records(query = ''): Promise<Array<Record<string, any>>> {
  const res = await fetch(new URL(`/admin/api/audit?limit=1000${query}`, gw.url), { headers: { authorization: `Bearer ${KEYS.ops}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { records: Array<Record<string, any>> }).records;
}

const call = (c: Client, name: string, args: Record<string, unknown> = {}) => c.callTool({ name, arguments: args }).catch((err: unknown) => err);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-judgment-'));
  state = join(dir, 'rug.state');
  await writeFile(state, 'original');
  hooks = await startHookServer((_path, body) => {
    if (body.method === 'tools/call' && body.params?.arguments?.message === 'deny-me') return { action: 'deny', reason: 'not today' };
    const asked = JSON.stringify(body.params?.messages ?? '');
    if (body.method === 'sampling/createMessage' && asked.includes('forbidden')) return { action: 'deny', reason: 'no sampling of that' };
    if (body.method === 'sampling/createMessage' && asked.includes('rewrite')) {
      return { action: 'modify', params: { messages: [{ role: 'user', content: { type: 'text', text: 'rewritten by the hook' } }], maxTokens: 5 } };
    }
    return { action: 'allow' };
  }, SECRET);
  const hook = (methods: string[]) => ({ url: `${hooks.url}/judge`, methods, phase: 'request', secret: SECRET });
  const file = join(dir, 'switchboard.json');
  await writeFile(
    file,
    JSON.stringify({
      mcpServers: {
        col: {
          command: process.execPath,
          args: [COLLIDER],
          tools: { deny: ['crash'] },
          requiredScopes: { tools: { touch: ['files:write'] } },
          hooks: [hook(['tools/call']), hook(['sampling/*'])],
        },
        rug: { command: process.execPath, args: [RUGPULL], env: { RUGPULL_STATE: state }, pinning: 'block' },
      },
      gateway: {
        host: '127.0.0.1',
        port: 0,
        logging: { level: 'warn' },
        auth: {
          stepUp: 'jsonrpc',
          apiKeys: [
            { name: 'alice', key: KEYS.alice },
            { name: 'bob', key: KEYS.bob },
            { name: 'ops', key: KEYS.ops, scopes: ['switchboard:admin'] },
          ],
        },
        policy: {
          rules: [
            { effect: 'allow', principals: ['key:alice'] },
            { effect: 'deny', principals: ['key:alice'], servers: ['col'], tools: ['secret_*'] },
            { effect: 'allow', principals: ['key:bob'], servers: ['col'], tools: ['echo'] },
          ],
        },
        rateLimits: { perTool: { perSecond: 0.001, burst: 10 } },
        audit: { sinks: [{ type: 'log' }], recent: 1000 },
      },
    }),
  );
  const config = await loadConfigFile(file);
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.close();
  await hooks?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('audit records name the rule that decided', () => {
  it('policy deny rule, no rule granting, a filter: on the server path and the aggregate', async () => {
    const alice = await client('/servers/col/mcp', KEYS.alice);
    const aggregate = await client('/mcp', KEYS.alice);
    const bob = await client('/servers/col/mcp', KEYS.bob);
    expect(await call(alice, 'echo', { message: 'fine' })).toMatchObject({ content: [{ text: 'collider echo: fine' }] });
    await call(alice, 'secret_admin');
    await call(aggregate, 'col__secret_admin');
    await call(bob, 'whoami');
    await call(alice, 'crash');
    const all = await records();
    const ok = all.find((r) => r.principal === 'key:alice' && r.tool === 'echo');
    expect(ok).toMatchObject({ decision: 'allow', rule: null, reason: null, outcome: 'ok' });
    expect(all.find((r) => r.endpoint === 'target:col' && r.tool === 'secret_admin')).toMatchObject({ decision: 'deny', rule: 'policy.rules[1] (deny)', reason: 'policy' });
    expect(all.find((r) => r.principal === 'key:bob' && r.tool === 'whoami')).toMatchObject({ decision: 'deny', rule: 'no policy rule grants it', reason: 'policy', outcome: 'denied' });
    expect(all.find((r) => r.tool === 'crash')).toMatchObject({ decision: 'deny', rule: 'filters of col', reason: 'filter' });
    // The aggregate: the caller's name table never holds a name the policy hides, so it is an unknown name there (docs/operations.md).
    expect(all.find((r) => r.tool === 'col__secret_admin')).toMatchObject({ endpoint: 'aggregate:*', code: 'GW_UNKNOWN_TOOL', outcome: 'error', rule: null });
  });

  it('step-up names the missing scopes; the rate limit and a request hook name theirs', async () => {
    const alice = await client('/servers/col/mcp', KEYS.alice);
    await call(alice, 'touch', { uri: 'file:///x' });
    await call(alice, 'echo', { message: 'deny-me' });
    for (let i = 0; i < 11; i++) await call(alice, 'log', { message: `n${i}` });
    const all = await records('&principal=key:alice');
    expect(all.find((r) => r.tool === 'touch')).toMatchObject({ decision: 'deny', rule: 'step-up: files:write', reason: 'GW_STEP_UP_REQUIRED', code: 'GW_STEP_UP_REQUIRED' });
    expect(all.find((r) => r.tool === 'echo' && r.code === 'GW_HOOK_DENIED')).toMatchObject({ decision: 'deny', rule: 'mcpServers.col.hooks[0]', reason: 'GW_HOOK_DENIED' });
    const logs = all.filter((r) => r.tool === 'log');
    // A refusal that fails the call (the limit, a hook) ends as an error with its code; the judgment says deny.
    expect(logs.filter((r) => r.outcome === 'error')).toHaveLength(1);
    expect(logs.find((r) => r.code === 'GW_RATE_LIMITED')).toMatchObject({ decision: 'deny', rule: 'rateLimits.perTool', reason: 'GW_RATE_LIMITED' });
    expect(logs.filter((r) => r.decision === 'allow' && r.outcome === 'ok')).toHaveLength(10);
  });

  it('pinning names the changed item', async () => {
    const first = await client('/servers/rug/mcp', KEYS.alice);
    await first.listTools();
    await writeFile(state, 'url');
    await eventually('echo refused as changed', async () => {
      const c = await client('/servers/rug/mcp', KEYS.alice);
      const outcome = await call(c, 'echo', { text: 'x' });
      return outcome instanceof Error && outcome.message.includes('refused until an operator approves it') ? true : undefined;
    });
    // Refused before any server took it: `server` is null, the rule names the server.
    const refused = (await records('&tool=echo')).find((r) => r.reason === 'GW_DEFINITION_CHANGED');
    expect(refused).toMatchObject({ decision: 'deny', rule: 'pinning: tool echo of rug', tool: 'echo', endpoint: 'target:rug', server: null });
  });

  it("a request hook judges a server's sampling request: denied, the upstream gets the error and the client is never asked", async () => {
    const alice = await client('/servers/col/mcp', KEYS.alice);
    const allowed = (await alice.callTool({ name: 'ask-sampling', arguments: { prompt: 'hello' } })) as { content: Array<{ text: string }> };
    expect(allowed.content[0]?.text).toContain('sampled');
    expect(sampled).toBe(1);
    const denied = (await alice.callTool({ name: 'ask-sampling', arguments: { prompt: 'forbidden words' } })) as { content: Array<{ text: string }>; isError?: boolean };
    // The collider answers its call with what the client answered: here the gateway's refusal.
    expect(JSON.stringify(denied)).toContain('GW_HOOK_DENIED');
    expect(sampled).toBe(1);
    const asked = hooks.calls.filter((h) => h.body.method === 'sampling/createMessage');
    expect(asked.map((h) => h.body.phase)).toEqual(['request', 'request']);
    expect(asked.every((h) => h.verified === true && h.body.target === 'col' && h.body.principal === 'key:alice')).toBe(true);
    const samplings = (await records('&server=col')).filter((r) => r.method === 'sampling/createMessage');
    expect(samplings.find((r) => r.decision === 'deny')).toMatchObject({ rule: 'mcpServers.col.hooks[1]', reason: 'GW_HOOK_DENIED', outcome: 'denied', principal: 'key:alice' });
    expect(samplings.find((r) => r.decision === 'allow')).toMatchObject({ outcome: 'ok' });
  });

  it('judges sampling the same way through the aggregate, and a modify reaches the client as the hook wrote it', async () => {
    const aggregate = await client('/mcp', KEYS.alice);
    const before = sampled;
    const denied = await aggregate.callTool({ name: 'col__ask-sampling', arguments: { prompt: 'forbidden again' } });
    expect(JSON.stringify(denied)).toContain('GW_HOOK_DENIED');
    expect(sampled).toBe(before);
    const rewritten = (await aggregate.callTool({ name: 'col__ask-sampling', arguments: { prompt: 'rewrite this' } })) as { content: Array<{ text: string }> };
    expect(rewritten.content[0]?.text).toContain('sampled: rewritten by the hook');
    expect(sampled).toBe(before + 1);
    const denials = (await records('&server=col')).filter((r) => r.method === 'sampling/createMessage' && r.endpoint === 'aggregate:*' && r.decision === 'deny');
    expect(denials).toHaveLength(1);
  });

  it("never tells the client which rule or hook refused it (the record does)", async () => {
    const alice = await client('/servers/col/mcp', KEYS.alice);
    const err = (await call(alice, 'echo', { message: 'deny-me' })) as { data?: Record<string, unknown> };
    expect(err.data).toMatchObject({ code: 'GW_HOOK_DENIED', target: 'col', phase: 'request', reason: 'not today' });
    expect(JSON.stringify(err.data)).not.toMatch(/hooks\[|"hook"/);
    const denied = (await call(alice, 'secret_admin')) as Error;
    expect(denied.message).not.toContain('policy.rules');
  });
});
