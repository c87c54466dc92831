/**
 * Guardrail hooks and the redaction guard (docs/governance.md, "Guardrail hooks") with real parts: a
 * hook server started here (node:http, verifying the documented signature), a real gateway, the recorder
 * fixture as the upstream, and the MCP SDK client, a 2026 stateless request, a WebSocket and legacy SSE as
 * downstreams. Deny, modify and pass on both phases, on a server path and the aggregate; a hook
 * that hangs follows its failureMode both ways; the redaction guard strips a private key.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HookConfig, TargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger, stdioTarget } from '../support/gateway.ts';
import { startHookServer, verifyAsDocumented, type HookServer } from '../support/hook-server.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';
import { openLegacyStream } from '../support/legacy-sse.ts';
import { initializeWs, openWs, wsUrl } from '../support/ws-client.ts';
import { fileURLToPath } from 'node:url';

const SECRET = 'hook-secret-0123456789abcdef';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq9xUPk3bDa0Q\n-----END PRIVATE KEY-----';
const recorder = { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/recorder-server.mjs', import.meta.url))] };

/** What the hook server decides, from the text of the echo call or of its result. */
function decide(path: string, body: Record<string, any>) {
  if (path === '/hang') return { hang: true as const };
  if (body.phase === 'request') {
    const text = String(body.params?.arguments?.text ?? '');
    if (text === 'deny-me') return { action: 'deny', reason: 'no deny-me today' };
    if (text === 'rewrite-me') return { action: 'modify', params: { name: 'echo', arguments: { text: 'rewritten by hook' } } };
    if (text === 'rename-me') return { action: 'modify', params: { name: 'getenv', arguments: { name: 'HOME' } } };
    return { action: 'allow' };
  }
  const text = String(body.result?.content?.[0]?.text ?? '');
  if (text === 'hide-me') return { action: 'deny', reason: 'result withheld' };
  if (text === 'swap-me') return { action: 'modify', result: { content: [{ type: 'text', text: 'swapped' }] } };
  if (text === 'break-me') return { action: 'modify', result: { content: 'not a list' } };
  return { action: 'allow' };
}

let hooks: HookServer;
let gw: RunningGateway;
const lines: string[] = [];

const hook = (path: string, extra: Partial<HookConfig> = {}): HookConfig => ({
  url: `${hooks.url}${path}`,
  methods: ['tools/call'],
  phase: 'both',
  timeoutMs: 5_000,
  failureMode: 'closed',
  secret: SECRET,
  maxConcurrent: 64,
  maxAnswerBytes: 1024 * 1024,
  ...extra,
});

beforeAll(async () => {
  hooks = await startHookServer(decide, SECRET);
  const config = buildConfig({ targets: { rec: recorder, opn: recorder, cls: recorder } });
  const targets = config.targets as Map<string, TargetConfig>;
  targets.set('rec', { ...stdioTarget('rec', recorder), hooks: [hook('/judge')], redact: { secrets: true, patterns: ['sw-internal-[0-9]+'], marker: '[REDACTED]' } });
  targets.set('opn', { ...stdioTarget('opn', recorder), hooks: [hook('/hang', { timeoutMs: 300, failureMode: 'open', phase: 'request' })] });
  targets.set('cls', { ...stdioTarget('cls', recorder), hooks: [hook('/hang', { timeoutMs: 300, failureMode: 'closed', phase: 'request' })] });
  gw = await startGateway(config, { logger: createTestLogger('debug', lines) });
});

afterAll(async () => {
  await gw?.close();
  await hooks?.close();
});

async function sdkClient(path: string): Promise<Client> {
  const client = new Client({ name: 'hooks-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, gw.url)));
  return client;
}

const textOf = (result: unknown) => ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;
/** The JSON-RPC error an SDK call was refused with. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string; data: Record<string, unknown> }> {
  try {
    await call;
  } catch (err) {
    return err as { code: number; message: string; data: Record<string, unknown> };
  }
  throw new Error('the call was not refused');
}

describe('hooks on a server path (2025 Streamable HTTP, MCP SDK client)', () => {
  it('passes, denies and modifies on the request and the response phase', async () => {
    const client = await sdkClient('/servers/rec/mcp');
    try {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('hello');
      const denied = await refusal(client.callTool({ name: 'echo', arguments: { text: 'deny-me' } }));
      expect(denied).toMatchObject({ code: -32600, data: { code: 'GW_HOOK_DENIED', target: 'rec', phase: 'request', reason: 'no deny-me today' } });
      expect(denied.message).toContain('no deny-me today');
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'rewrite-me' } }))).toBe('rewritten by hook');
      const withheld = await refusal(client.callTool({ name: 'echo', arguments: { text: 'hide-me' } }));
      expect(withheld).toMatchObject({ data: { code: 'GW_HOOK_DENIED', phase: 'response', reason: 'result withheld' } });
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'swap-me' } }))).toBe('swapped');
      // The denied request never reached the server; the rewritten one did, rewritten.
      const history = textOf(await client.callTool({ name: 'history', arguments: {} }));
      expect(history).not.toContain('deny-me');
      expect(history).toContain('rewritten by hook');
      expect(history).not.toContain('rewrite-me');
    } finally {
      await client.close();
    }
  });

  it('treats a replacement that is no longer valid as a hook failure (closed: refused)', async () => {
    const client = await sdkClient('/servers/rec/mcp');
    try {
      // Another tool's name in modified params, a result whose content is not a list.
      for (const text of ['rename-me', 'break-me']) {
        expect(await refusal(client.callTool({ name: 'echo', arguments: { text } }))).toMatchObject({ code: -32603, data: { code: 'GW_HOOK_FAILED', target: 'rec' } });
      }
    } finally {
      await client.close();
    }
  });

  it('sends the hook the principal, target, method and params (request) or result (response), signed', async () => {
    const client = await sdkClient('/servers/rec/mcp');
    try {
      const before = hooks.calls.length;
      await client.callTool({ name: 'echo', arguments: { text: 'inspect-me' } });
      const [request, response] = hooks.calls.slice(before);
      expect(request?.body).toEqual({ phase: 'request', principal: null, target: 'rec', method: 'tools/call', params: expect.objectContaining({ name: 'echo', arguments: { text: 'inspect-me' } }) });
      expect(response?.body).toMatchObject({ phase: 'response', target: 'rec', method: 'tools/call', params: { name: 'echo' }, result: { content: [{ type: 'text', text: 'inspect-me' }] } });
      expect(hooks.calls.every((call) => call.verified === true)).toBe(true);
      // tools/list is not in the hook's methods: never asked.
      await client.listTools();
      expect(hooks.calls.slice(before).map((call) => call.body.method)).toEqual(['tools/call', 'tools/call']);
    } finally {
      await client.close();
    }
  });
});

describe('the same hooks on every path to the tool', () => {
  it('the aggregate: the hook sees the server\'s own name and target', async () => {
    const client = await sdkClient('/mcp');
    try {
      const before = hooks.calls.length;
      expect(await refusal(client.callTool({ name: 'rec__echo', arguments: { text: 'deny-me' } }))).toMatchObject({ data: { code: 'GW_HOOK_DENIED', target: 'rec' } });
      expect(hooks.calls[before]?.body).toMatchObject({ target: 'rec', params: { name: 'echo' } });
      expect(textOf(await client.callTool({ name: 'rec__echo', arguments: { text: 'swap-me' } }))).toBe('swapped');
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 stateless request', async () => {
    const url = new URL('/servers/rec/mcp', gw.url);
    const denied = await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'deny-me' } });
    expect(errorOf(denied)).toMatchObject({ data: { code: 'GW_HOOK_DENIED', phase: 'request' } });
    const rewritten = resultOf(await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'rewrite-me' } }, { id: 2 }));
    expect(textOf(rewritten)).toBe('rewritten by hook');
    const swapped = resultOf(await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'swap-me' } }, { id: 3 }));
    expect(textOf(swapped)).toBe('swapped');
  });

  it('a WebSocket', async () => {
    const peer = await openWs(wsUrl(gw.url, '/servers/rec/ws'));
    try {
      await initializeWs(peer);
      peer.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hide-me' } } });
      expect((await peer.until(7)).at(-1)).toMatchObject({ id: 7, error: { data: { code: 'GW_HOOK_DENIED', phase: 'response' } } });
      peer.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ok' } } });
      expect((await peer.until(8)).at(-1)).toMatchObject({ id: 8, result: { content: [{ text: 'ok' }] } });
    } finally {
      peer.socket.close();
    }
  });
});

describe('the legacy HTTP+SSE path', () => {
  it('denies and modifies as the other paths do', async () => {
    const stream = await openLegacyStream(new URL('/servers/rec/sse', gw.url));
    try {
      await stream.post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
      expect(await stream.nextMessage()).toMatchObject({ id: 0, result: {} });
      await stream.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await stream.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'deny-me' } } });
      expect(await stream.nextMessage()).toMatchObject({ id: 1, error: { data: { code: 'GW_HOOK_DENIED', phase: 'request' } } });
      await stream.post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'swap-me' } } });
      expect(await stream.nextMessage()).toMatchObject({ id: 2, result: { content: [{ text: 'swapped' }] } });
    } finally {
      stream.close();
    }
  });
});

describe('a hook that does not answer in time', () => {
  it('failureMode open passes the call on; closed refuses it; both are counted', async () => {
    const open = await sdkClient('/servers/opn/mcp');
    const closed = await sdkClient('/servers/cls/mcp');
    try {
      expect(textOf(await open.callTool({ name: 'echo', arguments: { text: 'through' } }))).toBe('through');
      const refused = await refusal(closed.callTool({ name: 'echo', arguments: { text: 'through' } }));
      expect(refused).toMatchObject({ code: -32603, data: { code: 'GW_HOOK_FAILED', target: 'cls', phase: 'request' } });
      expect(typeof refused.data.correlationId).toBe('string');
      expect(JSON.stringify(refused)).not.toContain(hooks.url);
      const metrics = await (await fetch(new URL('/metrics', gw.url))).text();
      const line = (target: string, outcome: string) => metrics.split('\n').find((l) => l.startsWith('switchboard_hook_outcomes_total') && l.includes(`target="${target}"`) && l.includes(`outcome="${outcome}"`));
      expect(line('opn', 'failed-open')).toMatch(/ 1$/);
      expect(line('cls', 'failed-closed')).toMatch(/ 1$/);
      expect(lines.some((l) => l.includes('"failure":"timeout"') && l.includes('"target":"opn"') && l.includes('"level":40'))).toBe(true);
    } finally {
      await Promise.all([open.close(), closed.close()]);
    }
  });
});

describe('a request withdrawn while its hook decides', () => {
  it('gets no answer when the hook comes back, and the session goes on', async () => {
    const peer = await openWs(wsUrl(gw.url, '/ws'));
    try {
      await initializeWs(peer);
      const before = hooks.calls.length;
      // cls's hook hangs and fails closed after 300 ms: the cancel comes first.
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'cls__echo', arguments: { text: 'never' } } });
      while (hooks.calls.length === before) await new Promise((resolve) => setImmediate(resolve));
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } });
      // opn's hook hangs as long and fails open, so its answer comes after cls's hook has given up.
      peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'opn__echo', arguments: { text: 'after' } } });
      const frames = await peer.until(2);
      expect(frames.filter((frame) => frame.id === 1)).toEqual([]);
      expect(frames.at(-1)).toMatchObject({ id: 2, result: { content: [{ text: 'after' }] } });
    } finally {
      peer.socket.close();
    }
  });
});

describe('signatures', () => {
  it('the documented check refuses a forged or altered call', async () => {
    const signed = hooks.calls.find((call) => call.path === '/judge');
    expect(signed?.verified).toBe(true);
    const body = JSON.stringify({ phase: 'request', principal: null, target: 'rec', method: 'tools/call', params: { name: 'echo' } });
    const t = Math.floor(Date.now() / 1000);
    const { createHmac } = await import('node:crypto');
    const good = `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
    expect(verifyAsDocumented(good, body, SECRET)).toBe(true);
    expect(verifyAsDocumented(good, body.replace('echo', 'rm_rf'), SECRET)).toBe(false);
    expect(verifyAsDocumented(`t=${t},v1=${createHmac('sha256', 'guessed-secret-000000').update(`${t}.${body}`).digest('hex')}`, body, SECRET)).toBe(false);
    // A forged call to the hook server itself is refused there.
    const forged = await fetch(`${hooks.url}/judge`, { method: 'POST', headers: { 'x-switchboard-signature': good }, body: body.replace('echo', 'rm_rf') });
    expect(forged.status).toBe(401);
  });

  it('the secret is in no log line', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes(SECRET))).toBe(false);
  });
});

describe('the redaction guard', () => {
  it('strips a private key, an AWS key id and a configured pattern from a real upstream result', async () => {
    const client = await sdkClient('/servers/rec/mcp');
    try {
      const text = `key:\n${PEM}\nid AKIAIOSFODNN7EXAMPLE and sw-internal-42, plain words stay`;
      const out = textOf(await client.callTool({ name: 'echo', arguments: { text } }));
      expect(out).not.toContain('PRIVATE KEY');
      expect(out).not.toContain('MIIEvQ');
      expect(out).not.toContain('AKIAIOSFODNN7EXAMPLE');
      expect(out).not.toContain('sw-internal-42');
      expect(out).toBe('key:\n[REDACTED]\nid [REDACTED] and [REDACTED], plain words stay');
    } finally {
      await client.close();
    }
  });
});
