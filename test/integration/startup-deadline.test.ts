/**
 * The start-up handshake has its own deadline (startupTimeoutMs), apart from a tool call's: a hung
 * server, or a program that is not an MCP server at all, is reported to the client long before the
 * 5-minute request timeout, with a message naming the target and a correlation id; what the
 * program printed goes to the log only. Real children (test/fixtures/misbehaving-server.mjs).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestTarget } from '../support/gateway.ts';
import { fixture, post, type RawAnswer } from '../support/recorder.ts';

const open: TestGateway[] = [];

afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});

/** A long per-request timeout (as the 5-minute default) and a short start-up deadline. */
function slowToAnswer(mode: string): TestTarget {
  return {
    command: process.execPath,
    args: [fixture('misbehaving-server.mjs'), mode],
    timeouts: { requestMs: 120_000, resetOnProgress: true, maxTotalMs: 0, startupMs: 1_000 },
  };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'deadline', version: '1' } },
});

/** The initialize answer, or 'still waiting' after 20 s (far beyond the 1 s deadline, far below the request timeout). */
async function initialize(gw: TestGateway): Promise<RawAnswer | 'still waiting'> {
  const waiting = new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 20_000).unref());
  return Promise.race([post(gw.mcpUrl('t'), INIT), waiting]);
}

describe('start-up deadline', () => {
  it('a hung server: initialize fails with GW_UPSTREAM_TIMEOUT at the start-up deadline, not the request timeout', async () => {
    const logLines: string[] = [];
    const gw = await startTestGateway({ targets: { t: slowToAnswer('hang-on-init') }, logLines });
    open.push(gw);
    const answer = await initialize(gw);
    expect(answer).not.toBe('still waiting');
    const { json } = answer as RawAnswer;
    expect(json.error).toMatchObject({ data: { code: 'GW_UPSTREAM_TIMEOUT', target: 't' } });
    const error = json.error as { message: string; data: { correlationId: string } };
    expect(error.message).toMatch(/^Upstream "t" did not answer initialize within 1 s \(see the gateway log, correlation id [0-9a-f-]{36}\)$/);
    expect(logLines.some((line) => line.includes(error.data.correlationId))).toBe(true);
  });

  it('a program that prints only non-JSON: the client gets a short description, the excerpt goes to the log', async () => {
    const logLines: string[] = [];
    const gw = await startTestGateway({ targets: { t: slowToAnswer('not-mcp') }, logLines });
    open.push(gw);
    const answer = await initialize(gw);
    expect(answer).not.toBe('still waiting');
    const { json, text } = answer as RawAnswer;
    const error = json.error as { message: string; data: { code: string; correlationId: string } };
    expect(error.data.code).toBe('GW_UPSTREAM_TIMEOUT');
    expect(error.message).toContain('Upstream "t" wrote no MCP message within 1 s; it printed output that is not JSON-RPC');
    // What it printed is for the operator: in the log under the correlation id, never in the answer.
    expect(text).not.toContain('Usage');
    const logged = logLines.find((line) => line.includes(error.data.correlationId));
    expect(logged).toBeDefined();
    const entry = JSON.parse(logged as string) as { printed: string };
    expect(entry.printed).toMatch(/^Usage: tool \[--help\] <command>\?\[0m \(got initialize\)$/);
  });
});
