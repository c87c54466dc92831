/**
 * Two SDK v2 clients (`@modelcontextprotocol/client`, pinned to 2026-07-28) of one caller (no
 * gateway.auth, no credential: one `anonymous` caller, so the same endpoint, principal and
 * credential in the host keys), one declaring sampling and one declaring nothing, calling a tool
 * that makes the upstream ask for a sampling, alternately. The caller that declared nothing must
 * never be asked and never have its call answered by the other's sampling; the one that declared it
 * answers its own, exactly once per call. A 2025-era upstream (server-everything over stdio), on a
 * server's own path and the aggregate.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingServer, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { textOf } from '../support/recorder.ts';

let gw: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ targets: { everything: everythingServer(), second: everythingServer() } });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gw?.close();
});

async function connect(url: URL, sampling: boolean): Promise<{ client: Client; sampled: unknown[] }> {
  const sampled: unknown[] = [];
  const client = new Client({ name: 'attack-2026-caps', version: '1.0.0' }, { capabilities: sampling ? { sampling: {} } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  if (sampling) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      sampled.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'sampled by the declaring client' }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(url));
  clients.push(client);
  return { client, sampled };
}

const PATHS = [
  { path: '/servers/everything/mcp', tool: 'trigger-sampling-request' },
  { path: '/mcp', tool: 'everything__trigger-sampling-request' },
];

describe('sampling declared by one client of a caller and not by another', () => {
  for (const { path, tool } of PATHS) {
    it(`on ${path}: only the declaring client is asked, once per call of its own; the other is never answered with its sampling`, { timeout: 60_000 }, async () => {
      const url = new URL(path, gw.url);
      const asker = await connect(url, true);
      const silent = await connect(url, false);
      for (let round = 0; round < 2; round++) {
        const own = await asker.client.callTool({ name: tool, arguments: { prompt: `round ${round}`, maxTokens: 10 } });
        expect(textOf(own)).toContain('sampled by the declaring client');
        expect(asker.sampled).toHaveLength(round + 1);
        // The silent client's call: refused or failed, but never served by the other client's answer.
        const other = await silent.client.callTool({ name: tool, arguments: { prompt: `silent ${round}`, maxTokens: 10 } }).then(
          (result) => JSON.stringify(result),
          (err: unknown) => String(err),
        );
        expect(other).not.toContain('sampled by the declaring client');
        expect(asker.sampled).toHaveLength(round + 1);
      }
      expect(JSON.stringify(asker.sampled)).not.toContain('silent');
    });
  }
});
