/**
 * A hook learns who is calling: the principal id (gateway.auth) of each caller, never another's,
 * over a 2025 session and a 2026-07-28 stateless request. Real gateway with API keys, the recorder
 * fixture, a hook server started here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig, TargetConfig } from '../../src/config/types.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, stdioTarget } from '../support/gateway.ts';
import { startHookServer, type HookServer } from '../support/hook-server.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';
import { fileURLToPath } from 'node:url';

const KEYS = { erin: 'erin-key-0123456789abcdef0', frank: 'frank-key-0123456789abcdef' };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const recorder = { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/recorder-server.mjs', import.meta.url))] };

let hooks: HookServer;
let gw: RunningGateway;
let withHook: GatewayConfig;

beforeAll(async () => {
  // Frank may not call anything; erin may.
  hooks = await startHookServer((_path, body) => (body.principal === 'key:frank' ? { action: 'deny', reason: 'frank is on leave' } : { action: 'allow' }));
  const config = buildConfig({ targets: { rec: recorder } });
  const hook = { url: `${hooks.url}/who`, methods: ['tools/*'], phase: 'request' as const, timeoutMs: 5_000, failureMode: 'closed' as const, maxConcurrent: 8, maxAnswerBytes: 65_536 };
  (config.targets as Map<string, TargetConfig>).set('rec', { ...stdioTarget('rec', recorder), hooks: [hook] });
  withHook = { ...config, auth: keyAuth(KEYS) };
  gw = await startGateway(withHook, { logger: createTestLogger('silent', undefined) });
});

afterAll(async () => {
  await gw?.close();
  await hooks?.close();
});

/** A live 2025 session on /mcp as `who`. */
async function session(who: keyof typeof KEYS) {
  const url = new URL('/mcp', gw.url);
  const auth = { authorization: `Bearer ${KEYS[who]}` };
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'p', version: '1' } } };
  const opened = await fetch(url, { method: 'POST', headers: { ...HEADERS, ...auth }, body: JSON.stringify(init) });
  await opened.text();
  const id = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  await (await fetch(url, { method: 'POST', headers: { ...HEADERS, ...auth, ...id }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  let n = 1;
  return {
    async call(text: string): Promise<Record<string, any>> {
      const body = { jsonrpc: '2.0', id: n++, method: 'tools/call', params: { name: 'echo', arguments: { text } } };
      return (await (await fetch(url, { method: 'POST', headers: { ...HEADERS, ...auth, ...id }, body: JSON.stringify(body) })).json()) as Record<string, any>;
    },
    close: () => fetch(url, { method: 'DELETE', headers: { ...auth, ...id } }),
  };
}

async function call2025(who: keyof typeof KEYS, text: string) {
  const live = await session(who);
  try {
    return await live.call(text);
  } finally {
    await live.close();
  }
}

describe('the principal a hook sees', () => {
  it('is each caller\'s own, over 2025 sessions and 2026 requests', async () => {
    expect((await call2025('erin', 'e1')).result.content[0].text).toBe('e1');
    expect((await call2025('frank', 'f1')).error).toMatchObject({ data: { code: 'GW_HOOK_DENIED', reason: 'frank is on leave' } });
    const url = new URL('/mcp', gw.url);
    const asErin = resultOf(await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'e2' } }, { headers: { authorization: `Bearer ${KEYS.erin}` } }));
    expect(asErin).toMatchObject({ content: [{ text: 'e2' }] });
    const asFrank = await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'f2' } }, { headers: { authorization: `Bearer ${KEYS.frank}` }, id: 2 });
    expect(errorOf(asFrank)).toMatchObject({ data: { code: 'GW_HOOK_DENIED' } });
    const seen = hooks.calls.map((c) => [c.body.principal, c.body.params.arguments.text]);
    expect(seen).toEqual([['key:erin', 'e1'], ['key:frank', 'f1'], ['key:erin', 'e2'], ['key:frank', 'f2']]);
  });
});

describe('a reload', () => {
  it('reaches the hooks of a live session at once, both ways', async () => {
    const frank = await session('frank');
    try {
      expect((await frank.call('f3')).error).toMatchObject({ data: { code: 'GW_HOOK_DENIED' } });
      const targets = new Map(withHook.targets);
      targets.set('rec', stdioTarget('rec', recorder));
      gw.reload({ ...withHook, targets });
      expect((await frank.call('f4')).result.content[0].text).toBe('f4');
      gw.reload(withHook);
      expect((await frank.call('f5')).error).toMatchObject({ data: { code: 'GW_HOOK_DENIED' } });
    } finally {
      await frank.close();
    }
  });
});
