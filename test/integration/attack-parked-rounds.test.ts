/**
 * The outside probe of issue 30 on parked 2026 rounds: the `requestState` of a call parked for
 * input (an elicitation the hostile server asks, carrying a secret) is worth stealing. Another
 * principal presenting it, the same caller replaying it after it was answered, or presenting it
 * with another tool or on another path, must get nothing of the parked call; the rightful answer
 * completes it once, redacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { createTestLogger } from '../support/gateway.ts';
import { modern } from '../support/modern.ts';
import { fixture, type RawAnswer, type Recorded } from '../support/recorder.ts';

const KEY = 'AKIAIOSFODNN7EXAMPLE';
const ALICE = 'alice-parked-key-0123456789abcdef';
const BOB = 'bob-parked-key-0123456789abcdef00';
const ELICIT = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

let gw: RunningGateway;
let dir: string;
const received = (): Recorded[] => readFileSync(join(dir, 'received.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attack-parked-'));
  const record = `--record-to=${join(dir, 'received.ndjson')}`;
  const config = parseConfig({
    mcpServers: {
      s: { command: process.execPath, args: [fixture('attacker-server.mjs'), record], redact: { patterns: ['AKIA[0-9A-Z]{16}'] } },
      t: { command: process.execPath, args: [fixture('attacker-server.mjs')] },
    },
    gateway: { port: 0, auth: { apiKeys: [{ name: 'alice', key: ALICE }, { name: 'bob', key: BOB }] } },
  });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
});

afterAll(async () => {
  await gw?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const as = (key: string) => ({ meta: ELICIT, headers: { authorization: `Bearer ${key}` } });
const result = (a: RawAnswer) => a.json.result as Record<string, any> | undefined;
const answered = () => received().filter((r) => r.method === undefined && typeof r.id === 'string' && String(r.id).startsWith('ask-'));

async function park(path: string, name: string, key: string): Promise<{ state: string; responses: Record<string, unknown> }> {
  const a = await modern(new URL(path, gw.url), 'tools/call', { name, arguments: {} }, as(key));
  const r = result(a);
  expect(r?.resultType, a.text).toBe('input_required');
  expect(a.text).not.toContain(KEY);
  const [inputKey] = Object.keys(r?.inputRequests ?? {});
  return { state: r?.requestState as string, responses: { [inputKey as string]: { action: 'accept', content: { ok: true } } } };
}

describe('a parked round presented by someone else, or again', () => {
  it("another principal's retry with the state, another tool, another path and a replay get nothing", async () => {
    const url = new URL('/servers/s/mcp', gw.url);
    const { state, responses } = await park('/servers/s/mcp', 'ask_elicit', ALICE);
    const retry = (key: string, name: string, at: URL = url) => modern(at, 'tools/call', { name, arguments: {}, inputResponses: responses, requestState: state }, { ...as(key), id: `r-${name}-${key.slice(0, 3)}` });

    // Bob; Alice naming another tool (the retry would be judged and audited as `echo`, and
    // answered with the parked ask_elicit's result); Alice on the aggregate; on another server.
    for (const attempt of [retry(BOB, 'ask_elicit'), retry(ALICE, 'echo'), retry(ALICE, 'ECHO'), retry(ALICE, 's__ask_elicit', new URL('/mcp', gw.url)), retry(ALICE, 'ask_elicit', new URL('/servers/t/mcp', gw.url))]) {
      const a = await attempt;
      expect(a.status, a.text).toBe(400);
      expect((a.json.error as { data?: { code?: string } } | undefined)?.data?.code, a.text).toBe('GW_INVALID_REQUEST_STATE');
    }
    expect(answered(), 'no stolen, swapped or moved answer reached the server').toEqual([]);

    const done = await retry(ALICE, 'ask_elicit');
    expect(result(done)?.resultType, done.text).toBe('complete');
    expect(done.text).toContain('accept');
    expect(answered()).toHaveLength(1);

    const replayed = await retry(ALICE, 'ask_elicit');
    expect((replayed.json.error as { data?: { code?: string } } | undefined)?.data?.code, replayed.text).toBe('GW_INVALID_REQUEST_STATE');
    expect(answered(), 'a replay reached the server again').toHaveLength(1);
  });

  it('a state with a flipped character is refused', async () => {
    const { state, responses } = await park('/servers/s/mcp', 'ask_elicit', ALICE);
    const i = Math.floor(state.length / 2);
    const forged = `${state.slice(0, i)}${state[i] === 'A' ? 'B' : 'A'}${state.slice(i + 1)}`;
    const a = await modern(new URL('/servers/s/mcp', gw.url), 'tools/call', { name: 'ask_elicit', arguments: {}, inputResponses: responses, requestState: forged }, as(ALICE));
    expect(result(a)?.resultType, a.text).not.toBe('complete');
    expect(answered()).toHaveLength(1);
    // The round is still Alice's to answer (and nothing is left parked for the shutdown).
    const done = await modern(new URL('/servers/s/mcp', gw.url), 'tools/call', { name: 'ask_elicit', arguments: {}, inputResponses: responses, requestState: state }, as(ALICE));
    expect(result(done)?.resultType, done.text).toBe('complete');
  });
});
