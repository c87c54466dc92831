/**
 * Secrets the gateway itself gives upstreams never reach its log, even when an upstream echoes
 * them: a stdio child that prints its `env` secret to stderr (and crashes, with its stderr in the
 * client's error by `stderrInErrors`), and an HTTP upstream whose error body quotes the configured
 * X-Api-Key and Authorization headers. The whole run's log is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';
import { buildAggregateConfig } from '../support/aggregate.ts';
import { fixture } from '../support/cli.ts';
import { createTestLogger, remoteTarget } from '../support/gateway.ts';

const ENV_SECRET = 'sk-live-ENVSECRET-0123456789';
const HEADER_SECRET = 'hdr-HEADERSECRET-abcdef123456';
const BEARER_SECRET = 'cfg-BEARERSECRET-987654321';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'secrets-test', version: '1' } } };

const lines: string[] = [];
let gw: RunningGateway;
let remote: HttpFixture;

/** Opens a session on `path`, calls `tool`, ends it; the call's answer text. */
async function callOn(path: string, tool: string): Promise<string> {
  const opened = await fetch(new URL(path, gw.url), { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  expect(opened.status).toBe(200);
  await opened.text();
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const post = (body: unknown) => fetch(new URL(path, gw.url), { method: 'POST', headers: { ...HEADERS, ...session }, body: JSON.stringify(body) });
  try {
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    return await (await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } })).text();
  } finally {
    await fetch(new URL(path, gw.url), { method: 'DELETE', headers: session });
  }
}

beforeAll(async () => {
  remote = await startHttpFixture({ getStream: false });
  const base = buildAggregateConfig({
    targets: {
      leaky: { command: process.execPath, args: [fixture, 'crash-mid-call', '--print-env=API_TOKEN'], env: { API_TOKEN: ENV_SECRET }, stderrInErrors: true },
      remote: {
        target: remoteTarget('remote', { type: 'http', url: remote.url, headers: { 'x-api-key': HEADER_SECRET, authorization: `Bearer ${BEARER_SECRET}` } }),
        exposure: { eager: false },
      },
    },
  });
  gw = await startGateway(base, { logger: createTestLogger('debug', lines) });
});

afterAll(async () => {
  await gw?.close();
  await remote?.close();
});

describe('secrets the gateway injected, echoed by an upstream', () => {
  it("a child's stderr: logged with the env secret redacted, and the crash error's stderr too", async () => {
    const answer = await callOn('/servers/leaky/mcp', 'echo');
    expect(answer).toContain('GW_UPSTREAM_EXITED');
    expect(answer).toContain('API_TOKEN=[redacted]');
    expect(answer).not.toContain(ENV_SECRET);
    await expect.poll(() => lines.filter((l) => l.includes('API_TOKEN=')).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.includes('"stderr":"API_TOKEN=[redacted]"')).length).toBeGreaterThanOrEqual(2);
    expect(lines.join('\n')).not.toContain(ENV_SECRET);
  });

  it("an HTTP upstream's error body quoting the configured headers: logged with both redacted", async () => {
    const answer = await callOn('/servers/remote/mcp', 'fail500echo');
    expect(answer).toContain('GW_UPSTREAM_HTTP_ERROR');
    // The fixture really echoed them: it received the configured values.
    expect(remote.seen.at(-1)?.headers['x-api-key']).toBe(HEADER_SECRET);
    const quoted = lines.filter((l) => l.includes('refused x-api-key'));
    expect(quoted.length).toBeGreaterThanOrEqual(1);
    expect(quoted[0]).toContain('refused x-api-key [redacted] and [redacted]');
    const all = lines.join('\n') + answer;
    expect(all).not.toContain(HEADER_SECRET);
    expect(all).not.toContain(BEARER_SECRET);
  });
});
