/**
 * Step-up (SEP-2350) against the 2026 path's cached host keys: a wide token of a subject opens the
 * held session, then a narrower token of the same subject on the same keep-alive socket (its own
 * principal object, the same host key where nothing is forwarded) asks for the guarded tool. The
 * narrower one must be judged by its own scopes on every path (the server's own, the aggregate, a
 * group), alternating, and a reload that drops or restores the rule must be what the next request
 * meets. Real tokens from oidc-provider, real recorder children that log what they received.
 */
import { Agent, fetch as fetchOn } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, standardHeaders } from '../support/modern.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oidc-provider.ts';
import { textOf } from '../support/recorder.ts';
import { callsMarked, SCOPES, startStepUpGateway, type StepUpGateway } from '../support/step-up.ts';

let as: AuthorizationServer;
let su: StepUpGateway;
let dispatcher: Agent;

beforeAll(async () => {
  as = await startAuthorizationServer({ scopes: SCOPES });
  su = await startStepUpGateway(as, 'http');
  // One socket for every request of this file: the edge's per-connection proof is in play.
  dispatcher = new Agent({ connections: 1 });
});

afterAll(async () => {
  await dispatcher?.close();
  await su?.close();
  await as?.close();
});

const PATHS = [
  ['/servers/files/mcp', 'echo'],
  ['/mcp', 'files__echo'],
  ['/groups/g/mcp', 'files__echo'],
] as const;

/** A 2026 tools/call of `name` with `text`, carrying `token`, over the file's one socket. */
async function call(path: string, name: string, text: string, token: string): Promise<{ status: number; body: Record<string, any> }> {
  const params = { name, arguments: { text }, _meta: envelope() };
  const headers = { ...standardHeaders('tools/call', params), authorization: `Bearer ${token}` };
  const res = await fetchOn(new URL(path, su.gw.url), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: text, method: 'tools/call', params }), dispatcher });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('a narrower token of the subject that opened the held session', () => {
  for (const [path, tool] of PATHS) {
    it(`on ${path}: wide and narrow alternating, each judged by its own scopes; no narrow call reaches the upstream`, async () => {
      const wide = await su.token('svc-a', path, 'mcp files:write');
      const narrow = await su.token('svc-a', path, 'mcp');
      const marker = `alt-${path.replaceAll('/', '_')}`;
      for (let round = 0; round < 3; round++) {
        const served = await call(path, tool, `${marker}-wide-${round}`, wide);
        expect(served.status, `round ${round}`).toBe(200);
        expect(textOf(served.body.result)).toBe(`${marker}-wide-${round}`);
        const refused = await call(path, tool, `${marker}-narrow-${round}`, narrow);
        expect(refused.status, `round ${round}: ${JSON.stringify(refused.body)}`).toBe(403);
        expect(refused.body.error?.data).toMatchObject({ code: 'GW_STEP_UP_REQUIRED', missingScopes: ['files:write'] });
      }
      const reached = callsMarked(su.received(), marker).map((m) => (m.params?.arguments as { text: string }).text);
      expect(reached.filter((t) => t.includes('-narrow-'))).toEqual([]);
      expect(reached.filter((t) => t.includes('-wide-'))).toHaveLength(3);
    });
  }

  it('a reload that drops the rule serves the narrow token next; restoring it refuses the narrow token again', async () => {
    const [path, tool] = PATHS[0];
    const wide = await su.token('svc-a', path, 'mcp files:write');
    const narrow = await su.token('svc-a', path, 'mcp');
    expect((await call(path, tool, 'reload-wide-0', wide)).status).toBe(200);
    expect((await call(path, tool, 'reload-narrow-0', narrow)).status).toBe(403);
    try {
      su.gw.reload({ ...su.config, requiredScopes: new Map() });
      const served = await call(path, tool, 'reload-narrow-1', narrow);
      expect(served.status, JSON.stringify(served.body)).toBe(200);
      expect(textOf(served.body.result)).toBe('reload-narrow-1');
    } finally {
      su.gw.reload(su.config);
    }
    expect((await call(path, tool, 'reload-narrow-2', narrow)).status).toBe(403);
    expect((await call(path, tool, 'reload-wide-2', wide)).status).toBe(200);
  });
});
