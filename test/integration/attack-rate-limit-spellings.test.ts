/**
 * The outside probe of issue 30 on the per-tool rate limit: a server that reads tool names
 * case-insensitively (fixtures/attacker-server.mjs answers `ECHO` as `echo`) must not let a caller
 * that spent the bucket of `echo` carry on as `ECHO`, a full-width `ｅcho` or ` echo`, on the
 * server path, the aggregate and 2026 requests alike (one bucket per principal, target and tool).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { modernDriver, sessionDriver, type Answer, type MatrixGateway } from '../support/chain-matrix.ts';
import { createTestLogger } from '../support/gateway.ts';
import { fixture } from '../support/recorder.ts';

const KEY = 'rate-spelling-key-0123456789abcdef';
const BURST = 3;
let gw: RunningGateway;

beforeAll(async () => {
  const config = parseConfig({
    mcpServers: { s: { command: process.execPath, args: [fixture('attacker-server.mjs')] }, other: { command: process.execPath, args: [fixture('attacker-server.mjs')] } },
    gateway: { port: 0, auth: { apiKeys: [{ name: 'rater', key: KEY }] }, rateLimits: { perTool: { perSecond: 0.001, burst: BURST } } },
  });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
});

afterAll(async () => {
  await gw?.close();
});

const codeOf = (a: Answer) => (a.body.error as { data?: { code?: string } } | undefined)?.data?.code;

describe('one bucket per tool, whatever its spelling', () => {
  it('spent on `echo`, it is spent for every look-alike on every path', async () => {
    const m = { gw } as unknown as MatrixGateway;
    const server = await sessionDriver(m, '/servers/s/mcp', KEY);
    const aggregate = await sessionDriver(m, '/mcp', KEY);
    const modern = modernDriver(m, '/servers/s/mcp', KEY);
    try {
      for (let i = 0; i < BURST; i++) expect(codeOf(await server.request('tools/call', { name: 'echo', arguments: { text: `${i}` } }))).toBeUndefined();
      const tries: [string, Answer][] = [];
      for (const name of ['echo', 'ECHO', 'Echo', '\uFF45cho', ' echo', 'echo ']) tries.push([name, await server.request('tools/call', { name, arguments: { text: 'again' } })]);
      for (const name of ['s__echo', 's__ECHO']) tries.push([name, await aggregate.request('tools/call', { name, arguments: { text: 'again' } })]);
      for (const name of ['echo', 'ECHO']) tries.push([`2026 ${name}`, await modern.request('tools/call', { name, arguments: { text: 'again' } })]);
      for (const [name, a] of tries) {
        expect(JSON.stringify(a.body), name).not.toContain('echo: again');
      }
      expect(codeOf(tries[0]![1])).toBe('GW_RATE_LIMITED');
    } finally {
      await server.close();
      await aggregate.close();
      await modern.close();
    }
  });
});
