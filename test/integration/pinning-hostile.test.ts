/**
 * Pinning against a server that decides how its own list is read (issue 30, items 4 and 6): a raw
 * stdio server (test/fixtures/hostile-lister.mjs) that answers page 2 of `tools/list` with an
 * error or returns a cursor on every page, so a whole read never ends, and one that turns its
 * hints into strings and numbers. A real gateway from a config file, 2026 requests and SDK
 * sessions on the server path and the aggregate.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admin, eventually, modernPath, sdkPath, startFromFile, type PathClient, type PinningGateway } from '../support/pinning.ts';
import { fileURLToPath } from 'node:url';

const HOSTILE = fileURLToPath(new URL('../fixtures/hostile-lister.mjs', import.meta.url));
const ECHO = { name: 'echo', description: 'Echoes.', annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false } };
const HELPER = { name: 'helper', description: 'Helps.' };

let dir: string;
let running: PinningGateway[] = [];
let clients: PathClient[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-pins-hostile-'));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(running.splice(0).map((g) => g.gateway.close()));
  await rm(dir, { recursive: true, force: true });
});

async function startWith(mode: string, pages: string, tools: unknown[]): Promise<{ gw: PinningGateway; state: string; log: string }> {
  const state = join(dir, 'hostile.state');
  const log = join(dir, 'hostile.log');
  await writeFile(state, JSON.stringify({ pages, tools }));
  const config = join(dir, 'switchboard.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { hostile: { command: process.execPath, args: [HOSTILE], env: { HOSTILE_STATE: state, HOSTILE_LOG: log } } },
      gateway: { port: 0, pinning: { mode }, logging: { level: 'info' } },
    }),
  );
  const gw = await startFromFile(config);
  running.push(gw);
  return { gw, state, log };
}

const names = async (path: PathClient) => (await path.list()).map((t) => t.name);
const sealedLine = (gw: PinningGateway) => gw.lines.find((l) => l.includes('list sealed after an incomplete read'));

describe('pinning: a server that keeps its list from being read whole', () => {
  for (const [pages, why] of [
    ['error2', 'page 2 failed'],
    ['endless', 'still a cursor after 100 pages'],
  ] as const) {
    it(`${pages}: the list is sealed after the first read anyway; a tool added later waits for approval under block`, async () => {
      const { gw, state, log } = await startWith('block', pages, [ECHO]);
      const server = modernPath(gw.gateway, '/servers/hostile/mcp', 'echo');
      expect(await names(server)).toEqual(['echo']);
      // The first list starts the whole read; it ends short of the list's end, and seals anyway, at warn.
      const line = JSON.parse(await eventually('the incomplete read logged', async () => sealedLine(gw), 20_000));
      expect(line).toMatchObject({ level: 40, target: 'hostile', kind: 'tool' });
      expect(line.incomplete).toContain(why);
      const file = JSON.parse(await readFile(join(dir, 'switchboard-pins.json'), 'utf8'));
      expect(file.sealed.hostile).toContain('tool');
      // Bounded: the endless server was asked at most the first page plus 100 more.
      expect((await readFile(log, 'utf8')).trim().split('\n').length).toBeLessThanOrEqual(102);

      await writeFile(state, JSON.stringify({ pages, tools: [ECHO, HELPER] }));
      const added = await eventually('helper pending', async () => (await admin(gw.gateway, '/admin/pins')).json.pending.find((c: { key: string }) => c.key === 'helper'));
      expect(added.dangers).toEqual([]);
      const sdk = await sdkPath(gw.gateway, '/servers/hostile/mcp', 'echo');
      const aggregate = await sdkPath(gw.gateway, '/mcp', 'echo');
      clients.push(sdk, aggregate);
      for (const [path, helper] of [
        [server, 'helper'],
        [sdk, 'helper'],
        [aggregate, 'helper'],
      ] as const) {
        expect(await names(path), path.label).not.toContain(helper);
        const refused = await path.call(helper, {});
        expect('error' in refused && refused.error.data?.code, path.label).toBe('GW_DEFINITION_CHANGED');
      }
      expect(await server.call('echo', {})).toEqual({ text: 'called echo' });
    });
  }
});

describe('pinning: hints that are not booleans', () => {
  it('warn mode: "readOnlyHint": "true" and "destructiveHint": 0 are changed hints, withheld and refused; so on a tool added later', async () => {
    const plain = { name: 'echo', description: 'Echoes.' };
    const { gw, state } = await startWith('warn', 'one', [plain]);
    const server = modernPath(gw.gateway, '/servers/hostile/mcp', 'echo');
    const sdk = await sdkPath(gw.gateway, '/mcp', 'echo');
    clients.push(sdk);
    expect(await names(server)).toEqual(['echo']);
    await eventually('the list sealed', async () => {
      const file = JSON.parse(await readFile(join(dir, 'switchboard-pins.json'), 'utf8').catch(() => '{}'));
      return file.sealed?.hostile?.includes('tool') === true ? true : undefined;
    });

    const stringy = { ...plain, annotations: { readOnlyHint: 'true', destructiveHint: 0 } };
    const added = { name: 'helper', description: 'Helps.', annotations: { readOnlyHint: 'yes' } };
    await writeFile(state, JSON.stringify({ pages: 'one', tools: [stringy, added] }));
    const pending = await eventually('both judged', async () => {
      const list = (await admin(gw.gateway, '/admin/pins')).json.pending as Array<{ key: string; dangers: Array<{ code: string; detail: string }> }>;
      return list.length === 2 ? list : undefined;
    });
    const echo = pending.find((c) => c.key === 'echo')!;
    expect(echo.dangers.map((d) => d.detail)).toEqual(['annotations.destructiveHint is 0, not a boolean', 'annotations.readOnlyHint is "true", not a boolean']);
    expect(pending.find((c) => c.key === 'helper')!.dangers.map((d) => d.code)).toEqual(['hint-changed']);
    // Withheld from the list and refused on the 2026 path and an SDK session on the aggregate.
    await eventually('both withheld', async () => ((await names(server)).length === 0 ? true : undefined));
    for (const name of ['echo', 'helper']) {
      const refused = await server.call(name, {});
      expect('error' in refused && refused.error.data?.code, name).toBe('GW_DEFINITION_CHANGED');
      expect(new Set('error' in refused ? (refused.error.data?.dangers as string[]) : []), name).toEqual(new Set(['hint-changed']));
    }
    const viaSdk = await sdk.call('echo', {});
    expect('error' in viaSdk && viaSdk.error.message).toContain('not a boolean');
  });
});
