/**
 * One URL, many servers: the SDK client over Streamable HTTP against `/mcp` with three real targets
 * behind it (server-everything twice and the collider fixture with colliding, long and odd names).
 */
import { Client as SdkClient, type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { colliderServer, connectClient, errorOf, startAggregateGateway, textOf, type AggregateTarget } from '../support/aggregate.ts';
import { everythingServer, remoteTarget } from '../support/gateway.ts';
import { startEverythingHttp, type RemoteUpstream } from '../support/remote-upstreams.ts';
import { recorderServer } from '../support/recorder.ts';

/** The second server-everything runs remotely: its streamableHttp mode, reached over HTTP. */
let remote: RemoteUpstream | undefined;
const secondEverything = async (): Promise<AggregateTarget> => {
  remote = await startEverythingHttp();
  return { target: remoteTarget('two', { type: 'http', url: remote.url }) };
};

const LONG = 'a_very_long_tool_name_that_goes_on_and_on_to_exceed_the_limit_of_sixty_four_characters';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startAggregateGateway({
    targets: {
      one: everythingServer(),
      two: await secondEverything(),
      collider: { ...colliderServer('--page-size=3'), exposure: { tools: { allow: [], deny: ['secret_*'] } } },
    },
    groups: { dev: ['collider'] },
  });
});
afterAll(async () => {
  await gw?.close();
  await remote?.close();
});

async function allTools(client: Client): Promise<{ tools: Tool[]; pages: number }> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    pages++;
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages < 50);
  return { tools, pages };
}

describe('three targets behind /mcp', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connectClient(gw, '/mcp', { capabilities: { sampling: {} } });
  });
  afterAll(async () => {
    await client?.close();
  });

  it('answers initialize itself: gateway serverInfo, merged capabilities, negotiated version', () => {
    expect(client.getServerVersion()?.name).toBe('switchboard');
    const caps = client.getServerCapabilities();
    expect(caps?.tools).toEqual({ listChanged: true });
    expect(caps?.prompts).toEqual({ listChanged: true });
    expect(caps?.resources).toEqual({ subscribe: true, listChanged: true });
  });

  it('merges tools of every target over several pages, names namespaced, unique, strict and at most 64 characters', async () => {
    const { tools, pages } = await allTools(client);
    expect(pages).toBeGreaterThan(2); // the collider serves 3 tools per page
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(names).toEqual(expect.arrayContaining(['one__echo', 'two__echo', 'collider__echo', 'one__trigger-sampling-request', 'collider__ask-sampling']));
    // Config order: every tool of `one` comes before any of `two`, then the collider's.
    const firstOf = (p: string) => names.findIndex((n) => n.startsWith(p));
    expect(firstOf('one__')).toBeLessThan(firstOf('two__'));
    expect(firstOf('two__')).toBeLessThan(firstOf('collider__'));
    const shortened = names.filter((n) => n.startsWith('collider__a_very_long'));
    expect(shortened).toHaveLength(2);
    for (const n of shortened) expect(n).toMatch(/^.{55}-[0-9a-f]{8}$/);
    expect(names.some((n) => /^collider__dotted_name-[0-9a-f]{8}$/.test(n))).toBe(true);
    // Denied by the collider's filter.
    expect(names.some((n) => n.includes('secret'))).toBe(false);
    // The collider's 13 tools, one denied; both everythings give the same count.
    const count = (p: string) => names.filter((n) => n.startsWith(p)).length;
    expect(count('collider__')).toBe(12);
    expect(count('one__')).toBe(count('two__'));
  });

  it('refuses a tampered cursor with -32602', async () => {
    const first = await client.listTools();
    expect(first.nextCursor).toBeDefined();
    const cursor = first.nextCursor as string;
    const tampered = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    const error = await errorOf(client.listTools({ cursor: tampered }));
    expect(error.code).toBe(-32602);
    expect(error.data).toMatchObject({ code: 'GW_INVALID_CURSOR' });
  });

  it('routes calls to each target with the original name restored, long names included', async () => {
    expect(textOf(await client.callTool({ name: 'one__echo', arguments: { message: 'to one' } }))).toBe('Echo: to one');
    expect(textOf(await client.callTool({ name: 'two__echo', arguments: { message: 'to two' } }))).toBe('Echo: to two');
    expect(textOf(await client.callTool({ name: 'collider__echo', arguments: { message: 'to collider' } }))).toBe('collider echo: to collider');
    const { tools } = await allTools(client);
    for (const original of [LONG, `${LONG}_2`, 'dotted.name', 'x'.repeat(60)]) {
      const exposed = tools.find((t) => t.description === `collider ${original}`)?.name as string;
      expect(exposed).toBeDefined();
      expect(textOf(await client.callTool({ name: exposed, arguments: {} }))).toBe(original);
    }
  });

  it('answers an unknown tool and a filtered one exactly alike: -32602 "Unknown tool: <name>"', async () => {
    const unknown = await errorOf(client.callTool({ name: 'collider__no_such_tool', arguments: {} }));
    const filtered = await errorOf(client.callTool({ name: 'collider__secret_admin', arguments: {} }));
    expect(unknown.code).toBe(-32602);
    expect(filtered.code).toBe(-32602);
    expect(unknown.message).toContain('Unknown tool: collider__no_such_tool');
    expect(filtered.message).toContain('Unknown tool: collider__secret_admin');
    expect(filtered.data).toEqual(unknown.data);
  });

  it('reads resources through encoded URIs, lists pages of resources, templates and links', async () => {
    const resources: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      resources.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(resources).toEqual(expect.arrayContaining(['collider+collider://notes/1', 'collider+collider://notes/3']));
    expect(resources.filter((u) => u.startsWith('one+')).length).toBe(resources.filter((u) => u.startsWith('two+')).length);
    const read = await client.readResource({ uri: 'collider+collider://notes/1' });
    expect(read.contents[0]).toMatchObject({ uri: 'collider+collider://notes/1', text: 'content of collider://notes/1' });
    const fromTwo = resources.find((u) => u.startsWith('two+')) as string;
    expect((await client.readResource({ uri: fromTwo })).contents[0]?.uri).toBe(fromTwo);

    const { resourceTemplates } = await client.listResourceTemplates();
    const template = resourceTemplates.find((t) => t.uriTemplate.startsWith('one+') && t.uriTemplate.includes('{resourceId}'));
    expect(template).toBeDefined();
    const expanded = (template?.uriTemplate as string).replace('{resourceId}', '7');
    expect((await client.readResource({ uri: expanded })).contents[0]?.uri).toBe(expanded);

    const link = await client.callTool({ name: 'collider__link', arguments: {} });
    const linked = (link.content as Array<{ type: string; uri?: string }>)[0];
    expect(linked).toMatchObject({ type: 'resource_link', uri: 'collider+collider://notes/1' });
    expect((await client.readResource({ uri: linked?.uri as string })).contents[0]).toMatchObject({ text: 'content of collider://notes/1' });

    const missing = await errorOf(client.readResource({ uri: 'nobody+collider://notes/1' }));
    expect(missing.code).toBe(-32602);
    expect(missing.data).toMatchObject({ code: 'GW_RESOURCE_NOT_FOUND' });
  });

  it('gets prompts and completes by ref, with the original names restored and embedded URIs encoded', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['one__simple-prompt', 'collider__greet', 'collider__echo']));
    const got = await client.getPrompt({ name: 'collider__greet' });
    expect(got.messages[0]?.content).toMatchObject({ text: 'prompt greet' });
    expect(got.messages[1]?.content).toMatchObject({ type: 'resource', resource: { uri: 'collider+collider://notes/2' } });
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'collider__summarise' }, argument: { name: 'x', value: 'ab' } });
    expect(completion.completion.values).toEqual(['summarise:ab']);
    const byUri = await client.complete({ ref: { type: 'ref/resource', uri: 'collider+collider://notes/{n}' }, argument: { name: 'n', value: '1' } });
    expect(byUri.completion.values).toEqual(['collider://notes/{n}:1']);
  });

  it('carries sampling requests of two targets at once to the client and each answer back to the target that asked', async () => {
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]?.content;
      const prompt = content && 'text' in content ? String(content.text) : '';
      asked.push(prompt);
      // Answer out of order: the later request first.
      if (prompt.includes('from one')) await new Promise((r) => setTimeout(r, 50));
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `answer to [${prompt}]` } };
    });
    const [fromOne, fromCollider, fromTwo] = await Promise.all([
      client.callTool({ name: 'one__trigger-sampling-request', arguments: { prompt: 'from one', maxTokens: 5 } }),
      client.callTool({ name: 'collider__ask-sampling', arguments: { prompt: 'from collider' } }),
      client.callTool({ name: 'two__trigger-sampling-request', arguments: { prompt: 'from two', maxTokens: 5 } }),
    ]);
    expect(asked).toHaveLength(3);
    // server-everything wraps the prompt ("... context: from one") and quotes the answer it got.
    expect(textOf(fromOne)).toMatch(/answer to \[[^\]]*from one\]/);
    expect(textOf(fromOne)).not.toContain('from two');
    expect(textOf(fromTwo)).toMatch(/answer to \[[^\]]*from two\]/);
    expect(textOf(fromTwo)).not.toContain('from one');
    expect(textOf(fromCollider)).toBe('sampled: answer to [from collider]');
  });

  it('forwards a target\'s tools/list_changed and its new tool shows up in the merged list', async () => {
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    await client.callTool({ name: 'collider__add-tool', arguments: { name: 'fresh_tool' } });
    await changed;
    const { tools } = await allTools(client);
    expect(tools.map((t) => t.name)).toContain('collider__fresh_tool');
    expect(textOf(await client.callTool({ name: 'collider__fresh_tool', arguments: {} }))).toBe('fresh_tool');
  });

  it('re-encodes resources/updated and keeps the target in the logger name', async () => {
    const updated = new Promise<string>((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await client.subscribeResource({ uri: 'collider+collider://notes/3' });
    expect(textOf(await client.callTool({ name: 'collider__touch', arguments: { uri: 'collider://notes/3' } }))).toBe('touched');
    expect(await updated).toBe('collider+collider://notes/3');
    await client.unsubscribeResource({ uri: 'collider+collider://notes/3' });

    const logged = new Promise<string | undefined>((resolve) =>
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => resolve(n.params.logger)),
    );
    await client.callTool({ name: 'collider__log', arguments: { message: 'hello' } });
    expect(await logged).toBe('collider/collider-log');
  });

  it('answers ping and logging/setLevel itself', async () => {
    await expect(client.ping()).resolves.toEqual({});
    await expect(client.setLoggingLevel('debug')).resolves.toEqual({});
  });
});

describe('the same aggregate over the other downstream transports', () => {
  // /ws and /sse serve what /mcp serves: the same namespaced tools, routed the same way.
  it.each([
    ['WebSocket at /ws', (base: string) => new WebSocketClientTransport(new URL('/ws', base.replace(/^http/, 'ws')))],
    ['legacy HTTP+SSE at /sse', (base: string) => new SSEClientTransport(new URL('/sse', base))],
  ])('%s lists namespaced tools and routes a call', async (_name, transportFor) => {
    const client = new SdkClient({ name: 'aggregate-transports', version: '1.0.0' });
    await client.connect(transportFor(gw.url));
    try {
      expect(client.getServerVersion()?.name).toBe('switchboard');
      const { tools } = await allTools(client);
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['one__echo', 'two__echo']));
      const answer = await client.callTool({ name: 'two__echo', arguments: { message: 'over another transport' } });
      expect(textOf(answer)).toBe('Echo: over another transport');
    } finally {
      await client.close();
    }
  });
});

describe('failures stay with their target', () => {
  it('a target that cannot start is missing from lists (named in _meta) and calls to it name it; the others work', async () => {
    const dead = await startAggregateGateway({
      targets: { live: colliderServer(), dead: { command: '/nonexistent/switchboard-test-command' } },
    });
    try {
      const client = await connectClient(dead);
      const page = await client.listTools();
      expect(page.tools.map((t) => t.name)).toContain('live__echo');
      expect(page.tools.some((t) => t.name.startsWith('dead__'))).toBe(false);
      const unavailable = (page._meta?.['switchboard/unavailable'] ?? []) as Array<{ target: string; reason: string }>;
      expect(unavailable.map((u) => u.target)).toEqual(['dead']);
      const error = await errorOf(client.callTool({ name: 'dead__anything', arguments: {} }));
      expect(error.message).toContain('"dead"');
      expect(error.data).toMatchObject({ code: 'GW_TARGET_UNAVAILABLE', target: 'dead' });
      expect(textOf(await client.callTool({ name: 'live__echo', arguments: { message: 'still' } }))).toBe('collider echo: still');
      await client.close();
    } finally {
      await dead.close();
    }
  });

  it('a target too slow for a merged list is left out of it (named in _meta) instead of holding it up', async () => {
    const slow = await startAggregateGateway({ targets: { ok: colliderServer(), slow: colliderServer('--hang-lists') }, listTimeoutMs: 300 });
    try {
      const client = await connectClient(slow);
      const page = await client.listTools();
      expect(page.tools.map((t) => t.name)).toContain('ok__echo');
      expect(page.tools.some((t) => t.name.startsWith('slow__'))).toBe(false);
      const unavailable = page._meta?.['switchboard/unavailable'] as Array<{ target: string; reason: string }>;
      expect(unavailable).toEqual([{ target: 'slow', reason: expect.stringMatching(/within 30\d ms/) as unknown as string }]);
      // Only its lists hang: its other features still work.
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('slow__greet');
      await client.close();
    } finally {
      await slow.close();
    }
  });

  it('a target crashing mid-session fails only its own call; list_changed follows and the others keep working', async () => {
    const client = await connectClient(gw);
    try {
      expect(textOf(await client.callTool({ name: 'collider__echo', arguments: { message: 'before' } }))).toBe('collider echo: before');
      const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      const crash = await errorOf(client.callTool({ name: 'collider__crash', arguments: {} }));
      expect(crash.data).toMatchObject({ target: 'collider' });
      await changed;
      expect(textOf(await client.callTool({ name: 'one__echo', arguments: { message: 'after' } }))).toBe('Echo: after');
      const again = await errorOf(client.callTool({ name: 'collider__echo', arguments: { message: 'again' } }));
      expect(again.data).toMatchObject({ code: 'GW_TARGET_UNAVAILABLE', target: 'collider' });
      const page = await client.listTools();
      expect(page.tools.some((t) => t.name.startsWith('collider__'))).toBe(false);
      expect(page._meta?.['switchboard/unavailable']).toEqual([expect.objectContaining({ target: 'collider' })]);
    } finally {
      await client.close();
    }
  });
});

describe('restart policy inside an aggregate session', () => {
  it('onExit: restart starts a crashed target afresh on next use, up to maxRestarts; then it stays unavailable', async () => {
    const restart = { onExit: 'restart' as const, maxRestarts: 1, initialBackoffMs: 100, maxBackoffMs: 100 };
    const gateway = await startAggregateGateway({ targets: { a: { ...colliderServer(), restart }, b: colliderServer() } });
    try {
      const client = await connectClient(gateway);
      const pidOf = async () => (JSON.parse(textOf(await client.callTool({ name: 'a__whoami', arguments: {} }))) as { pid: number }).pid;
      const first = await pidOf();
      await errorOf(client.callTool({ name: 'a__crash', arguments: {} }));
      const second = await pidOf();
      expect(second).not.toBe(first);
      await errorOf(client.callTool({ name: 'a__crash', arguments: {} }));
      const error = await errorOf(client.callTool({ name: 'a__whoami', arguments: {} }));
      expect(error.data).toMatchObject({ code: 'GW_TARGET_UNAVAILABLE', target: 'a' });
      expect(textOf(await client.callTool({ name: 'b__echo', arguments: { message: 'b lives' } }))).toBe('collider echo: b lives');
      await client.close();
    } finally {
      await gateway.close();
    }
  });
});

describe('groups and prefixes', () => {
  it('a group serves only its targets, and its sessions are unknown on /mcp', async () => {
    const client = await connectClient(gw, '/groups/dev/mcp');
    try {
      const { tools } = await allTools(client);
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.every((t) => t.name.startsWith('collider__'))).toBe(true);
      const error = await errorOf(client.callTool({ name: 'one__echo', arguments: { message: 'x' } }));
      expect(error.message).toContain('Unknown tool: one__echo');
      const sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId as string;
      const response = await fetch(new URL('/mcp', gw.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(response.status).toBe(404);
    } finally {
      await client.close();
    }
  });

  it('"no prefix" mode exposes bare names; a name two targets share goes to the first and the collision names both', async () => {
    const bare = await startAggregateGateway({
      targets: {
        first: { ...colliderServer('--page-size=100', '--instructions=Use the first one.'), exposure: { prefix: '', eager: true } },
        second: { ...colliderServer('--page-size=100'), exposure: { prefix: 'second' } },
        third: { ...colliderServer('--page-size=100'), exposure: { prefix: '' } },
      },
    });
    try {
      const client = await connectClient(bare);
      expect(client.getInstructions()).toBe('## first\n\nUse the first one.');
      const page = await client.listTools();
      const names = page.tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['echo', 'whoami', 'second__echo']));
      expect(names.filter((n) => n === 'echo')).toHaveLength(1);
      const collisions = page._meta?.['switchboard/collisions'] as Array<{ kept: { target: string }; dropped: { target: string } }>;
      expect(collisions.length).toBeGreaterThan(0);
      expect(collisions[0]).toMatchObject({ exposed: 'echo', kept: { target: 'first', name: 'echo' }, dropped: { target: 'third', name: 'echo' } });
      const who = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as { argv: string[] };
      expect(who.argv).toContain('--instructions=Use the first one.');
      await client.close();
    } finally {
      await bare.close();
    }
  });
});

describe('cancellation and progress', () => {
  it('a client cancel reaches the owning target under that target\'s own id; progress comes back with the client\'s token', async () => {
    const logLines: string[] = [];
    const pair = await startAggregateGateway({ targets: { rec: recorderServer(), col: colliderServer() }, logLines });
    const started = (target: string) =>
      logLines.filter((l) => l.includes('"aggregate member ready"') && l.includes(`"target":"${target}"`)).length;
    try {
      const client = await connectClient(pair);
      const controller = new AbortController();
      let firstProgress!: () => void;
      const progressed = new Promise<void>((resolve) => (firstProgress = resolve));
      const progress: number[] = [];
      const call = client.callTool({ name: 'rec__slow', arguments: { ms: 30_000, steps: 30 } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          progress.push(p.progress);
          firstProgress();
        },
      });
      await progressed;
      controller.abort('changed my mind');
      await expect(call).rejects.toThrow();
      expect(progress[0]).toBe(1);
      const history = JSON.parse(textOf(await client.callTool({ name: 'rec__history', arguments: {} }))) as Array<{
        id?: unknown;
        method?: string;
        params?: { name?: string; requestId?: unknown };
      }>;
      const slow = history.find((m) => m.method === 'tools/call' && m.params?.name === 'slow');
      const cancel = history.find((m) => m.method === 'notifications/cancelled');
      expect(slow).toBeDefined();
      expect(cancel?.params?.requestId).toBe(slow?.id);
      // Lazy: the collider has not been needed yet, so it has not been started; its first call starts it.
      expect(started('rec')).toBe(1);
      expect(started('col')).toBe(0);
      expect(textOf(await client.callTool({ name: 'col__echo', arguments: { message: 'ok' } }))).toBe('collider echo: ok');
      expect(started('col')).toBe(1);
      await client.close();
    } finally {
      await pair.close();
    }
  });
});
