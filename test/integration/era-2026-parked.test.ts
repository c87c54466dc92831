/**
 * Parked input_required rounds have their own bound (issue 30, item 11): one anonymous 2026 caller
 * that parks round after round (never answering its elicitations) must not lock out the other
 * anonymous callers. Real parts: the recorder over stdio asks its client mid-call, 2026 requests
 * through test/support/modern.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { keyAuth } from '../support/auth-server.ts';
import { buildConfig, createTestLogger, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { errorOf, modern, resultOf } from '../support/modern.ts';
import { recorderServer, textOf } from '../support/recorder.ts';

const running: Array<TestGateway | RunningGateway> = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((g) => g.close()));
});

const ELICIT = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const OTHER = { 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
const NONE = { 'io.modelcontextprotocol/clientCapabilities': {} };
/** Parks `n` elicitation rounds as `headers`' caller; the answers (input_required or a refusal). */
async function park(url: URL, n: number, from: number, headers: Record<string, string> = {}) {
  const out = [];
  for (let i = from; i < from + n; i++) out.push(await modern(url, 'tools/call', elicit(i), { meta: ELICIT, id: `p${i}`, headers }));
  return out;
}

const elicit = (i: number) => ({ name: 'ask-client', arguments: { id: `srv-${i}`, method: 'elicitation/create', params: { message: `q${i}?`, requestedSchema: { type: 'object', properties: {} } } } });

describe('parked input_required rounds', () => {
  it('one anonymous caller parking rounds past the bound is refused for more; other callers are still served', async () => {
    const gw = await startTestGateway({
      targets: { rec: recorderServer() },
      session: { stateless: { hostsPerCaller: 4, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 16, maxParkedPerCaller: 8, maxParked: 64 } },
    });
    running.push(gw);
    const url = gw.mcpUrl();
    let parked = 0;
    let refused: ReturnType<typeof errorOf> | undefined;
    for (let i = 0; i < 12; i++) {
      const answer = await modern(url, 'tools/call', elicit(i), { meta: ELICIT, id: `p${i}` });
      if (answer.json.error === undefined) {
        expect(resultOf(answer).resultType).toBe('input_required');
        parked++;
      } else {
        refused = errorOf(answer);
        expect(answer.status).toBe(503);
      }
    }
    expect(parked).toBe(8);
    expect(refused?.data?.code).toBe('GW_INPUT_ROUNDS_LIMIT');
    // Other anonymous callers: new calls are served, with the same capabilities and with others.
    for (const [meta, label] of [
      [ELICIT, 'same capabilities'],
      [OTHER, 'other capabilities'],
      [NONE, 'no capabilities'],
      [{ 'io.modelcontextprotocol/clientCapabilities': { roots: {} } }, 'roots'],
      [{ 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }, 'elicitation form'],
    ] as const) {
      const echo = await modern(url, 'tools/call', { name: 'echo', arguments: { text: label } }, { meta });
      expect(echo.json.error, label).toBeUndefined();
      expect(textOf(resultOf(echo)), label).toContain(label);
    }
  });
});

describe('parked rounds per principal and in all', () => {
  it("one key's parked rounds leave another's room; the total bound holds; an answered round frees its place", async () => {
    const base = buildConfig({ targets: { rec: recorderServer() } });
    const stateless = { ...base.session.stateless, maxParkedPerCaller: 3, maxParked: 5 };
    const config = { ...base, session: { ...base.session, stateless }, auth: keyAuth({ alice: 'alice-key-0123456789', bob: 'bob-key-0123456789' }) };
    const gw = await startGateway(config, { logger: createTestLogger('silent', undefined) });
    running.push(gw);
    const url = new URL('/mcp', gw.url);
    const alice = { authorization: 'Bearer alice-key-0123456789' };
    const bob = { authorization: 'Bearer bob-key-0123456789' };
    const outcome = (a: Awaited<ReturnType<typeof modern>>) => (a.json.error === undefined ? resultOf(a).resultType : errorOf(a).data?.code);
    expect((await park(url, 4, 0, alice)).map(outcome)).toEqual(['input_required', 'input_required', 'input_required', 'GW_INPUT_ROUNDS_LIMIT']);
    const bobs = await park(url, 3, 10, bob);
    expect(bobs.map(outcome)).toEqual(['input_required', 'input_required', 'GW_INPUT_ROUNDS_LIMIT']);
    expect(errorOf(bobs[2]!).data).toMatchObject({ kind: 'total', limit: 5 });
    expect(bobs[2]!.headers.get('retry-after')).toMatch(/^\d+$/);
    // Both still get their other calls served.
    for (const who of [alice, bob]) expect(textOf(resultOf(await modern(url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { meta: OTHER, headers: who })))).toContain('hi');
    // Bob answers one of his rounds: its call completes, and its place is free again.
    const first = resultOf(bobs[0]!);
    const key = Object.keys(first.inputRequests as object)[0]!;
    const done = await modern(url, 'tools/call', { ...elicit(10), inputResponses: { [key]: { action: 'accept', content: {} } }, requestState: first.requestState }, { meta: ELICIT, headers: bob });
    expect(done.json.error).toBeUndefined();
    expect(resultOf(done).resultType).not.toBe('input_required');
    expect((await park(url, 1, 20, bob)).map(outcome)).toEqual(['input_required']);
  });
});
