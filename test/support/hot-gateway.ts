/**
 * The gateway the hot-POST attacks share (attack-hot-post.test.ts, attack-hot-answers.test.ts):
 * two recorder servers (so `/mcp` is the aggregate), two API-key principals, a policy that denies
 * `getenv` to `key:b`, and an in-flight cap of three per session. Plus the raw messages they send.
 */
import { expect } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from './gateway.ts';
import { fixture, rpc, type RawAnswer, type RawSession, type Recorded } from './recorder.ts';

export const KEY_A = 'hot-post-key-a-0123456789abcdef';
export const KEY_B = 'hot-post-key-b-0123456789abcdef';
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export interface HotGateway {
  gw: RunningGateway;
  /** /servers/rec/mcp */
  url: URL;
  /** key:a, a 2025-03-26 session (batches allowed). */
  a: RawSession;
  /** key:b, a 2025-11-25 session. */
  b: RawSession;
  /** A's session still answers, on the fast path (a lone request). */
  expectHealthy(): Promise<void>;
}

export async function startHotGateway(): Promise<HotGateway> {
  const recorder = { command: process.execPath, args: [fixture('recorder-server.mjs')] };
  const config = parseConfig({
    mcpServers: { rec: recorder, rec2: recorder },
    gateway: {
      port: 0,
      auth: { apiKeys: [{ name: 'a', key: KEY_A }, { name: 'b', key: KEY_B }] },
      policy: { rules: [{ servers: ['*'] }, { effect: 'deny', principals: ['key:b'], servers: ['rec'], tools: ['getenv'] }] },
      limits: { maxInflightPerSession: 3 },
    },
  });
  const gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
  try {
    const url = new URL('/servers/rec/mcp', gw.url);
    const a = await rpc.initialize(url, '2025-03-26', bearer(KEY_A));
    const b = await rpc.initialize(url, '2025-11-25', bearer(KEY_B));
    const expectHealthy = async () => {
      const list = await a.request({ jsonrpc: '2.0', id: 'healthy', method: 'tools/list' });
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.json.result)).toContain('echo');
    };
    return { gw, url, a, b, expectHealthy };
  } catch (err) {
    await gw.close();
    throw err;
  }
}

/** The GW_* code of a raw answer's last message, or of one message. */
export const codeOf = (answer: RawAnswer | Recorded): string | undefined => {
  const message: Recorded = 'json' in answer && answer.json !== undefined ? (answer as RawAnswer).json : (answer as Recorded);
  return (message.error as { data?: { code?: string } } | undefined)?.data?.code;
};

export const note = (marker: string) => ({ jsonrpc: '2.0', method: 'notifications/x-marker', params: { marker } });
export const call = (id: unknown, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

export async function waitUntil(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
