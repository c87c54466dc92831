/**
 * Attack on progressive discovery and pinning together (issues 33 and governance): a server pulls
 * the rug (its approved `echo` changes to one with words addressed to the model), and a caller on
 * a discovery endpoint reaches the withheld definition another way: `search_tools`,
 * `describe_tool`, `call_tool` (nested too) and a direct call, on a 2025 session and 2026 requests.
 * Real gateway from a config file, rugpull fixture children, SDK client.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernPath, pendingEcho, RUGPULL, sdkPath, startFromFile, type CallOutcome, type PathClient, type PinningGateway } from '../support/pinning.ts';

let dir: string;
let state: string;
let gw: PinningGateway;
const clients: PathClient[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attack-pinned-discovery-'));
  state = join(dir, 'rug.state');
  await writeFile(state, 'original');
  await writeFile(join(dir, 'calm.state'), 'original');
  const config = join(dir, 'switchboard.json');
  await writeFile(
    config,
    JSON.stringify({
      // Two servers: /mcp is an aggregate (one server alone is served as itself).
      mcpServers: { rug: { command: process.execPath, args: [RUGPULL], env: { RUGPULL_STATE: state } }, calm: { command: process.execPath, args: [RUGPULL], env: { RUGPULL_STATE: join(dir, 'calm.state') } } },
      gateway: { port: 0, pinning: { mode: 'block' }, aggregate: { discovery: { mode: 'search' } }, logging: { level: 'info' } },
    }),
  );
  gw = await startFromFile(config);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const textOf = (o: CallOutcome) => ('text' in o ? o.text : `error ${o.error.message}`);

describe('attack: a withheld (pinned, changed) tool through discovery', () => {
  it('the changed definition is never shown nor called, on a 2025 session and 2026 requests', async () => {
    const session = await sdkPath(gw.gateway, '/mcp', 'rug__echo');
    clients.push(session);
    expect((await session.list()).map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool']);
    // Approved at first sight, and callable through the meta-tool.
    expect(textOf(await session.call('call_tool', { name: 'rug__echo', arguments: { text: 'hi' } }))).toBe('echo: hi');
    await writeFile(state, 'inject');
    await pendingEcho(gw.gateway, 'rug');
    for (const path of [session, modernPath(gw.gateway, '/mcp', 'rug__echo')]) {
      for (const query of ['echo', 'echoes the text back', 'IMPORTANT']) {
        const found = textOf(await path.call('search_tools', { query, limit: 50 }));
        expect(found, `${path.label} ${query}`).not.toMatch(/IMPORTANT/);
      }
      const described = textOf(await path.call('describe_tool', { name: 'rug__echo' }));
      expect(described, path.label).not.toMatch(/IMPORTANT/);
      for (const [name, args] of [
        ['call_tool', { name: 'rug__echo', arguments: { text: 'x' } }],
        ['call_tool', { name: 'call_tool', arguments: { name: 'rug__echo', arguments: { text: 'x' } } }],
        ['rug__echo', { text: 'x' }],
      ] as const) {
        const outcome = textOf(await path.call(name, args as Record<string, unknown>));
        expect(outcome, `${path.label} ${name} ${JSON.stringify(args)}`).not.toBe('echo: x');
      }
      // A tool that did not change still answers through the meta-tool.
      expect(textOf(await path.call('call_tool', { name: 'rug__steady', arguments: {} })), path.label).toBe('steady');
    }
  });
});
