/**
 * The config files other MCP clients write, loaded as they are (test/fixtures/client-configs/): what maps is
 * read, each ignored key is named once, `disabled` is honoured. Switchboard's own format stays strict.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../../src/config/load.ts';
import type { GatewayConfig, TargetConfig } from '../../../src/config/types.ts';

const dir = fileURLToPath(new URL('../../fixtures/client-configs/', import.meta.url));
const env = { GITHUB_TOKEN: 'gh-1', REMOTE_TOKEN: 'r-2', HOSTED_TOKEN: 'h-3', HOME: '/home/u', PATH: '/bin' };
const load = (name: string) => loadConfigFile(name, { cwd: dir, env });
const target = (config: GatewayConfig, name: string) => config.targets.get(name) as TargetConfig & Record<string, unknown>;

describe('foreign config files', () => {
  it('Claude Desktop: other settings beside mcpServers are named once and ignored', async () => {
    const config = await load('claude-desktop.json');
    expect([...config.targets.keys()]).toEqual(['filesystem', 'github']);
    expect(target(config, 'github')).toMatchObject({ type: 'stdio', command: 'npx', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'gh-1' } });
    expect(config.warnings).toEqual([
      'ignored key "globalShortcut" (in the file): Switchboard has no use for it',
      'ignored key "preferences" (in the file): Switchboard has no use for it',
    ]);
  });

  it('Cline: autoApprove ignored (one warning), timeout in seconds, streamableHttp, disabled honoured', async () => {
    const config = await load('cline.json');
    expect([...config.targets.keys()]).toEqual(['memory', 'remote']);
    expect(target(config, 'memory')).toMatchObject({ type: 'stdio', timeouts: { requestMs: 60_000 } });
    expect(target(config, 'remote')).toMatchObject({ type: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer r-2' } });
    expect(config.warnings).toEqual(['ignored key "autoApprove" (in "memory", "remote", "old"): Switchboard has no use for it']);
  });

  it('VS Code: servers root, types, ${env:...}; inputs and envFile named; a dotted name renamed', async () => {
    const config = await load('vscode.json');
    expect([...config.targets.keys()]).toEqual(['fetch', 'docs-search', 'legacy']);
    expect(target(config, 'fetch')).toMatchObject({ type: 'stdio', command: 'uvx', env: { HOME_DIR: '/home/u' } });
    expect((target(config, 'fetch').env as Record<string, string>)['API_KEY']).toBeUndefined();
    expect(target(config, 'docs-search')).toMatchObject({ type: 'http', url: 'https://docs.example.com/mcp' });
    expect(target(config, 'legacy')).toMatchObject({ type: 'sse' });
    expect(config.warnings).toEqual([
      expect.stringContaining('server "fetch": env.API_KEY asks for a VS Code input'),
      'server "docs.search" is served as "docs-search" (names are letters, digits, - and _; it becomes /servers/docs-search/mcp)',
      'ignored key "inputs" (in the file): Switchboard has no use for it',
      'ignored key "envFile" (in "fetch"): Switchboard has no use for it',
    ]);
  });

  it('Cline marketplace: servers named after their repository path serve under their last meaningful segment, unique, same every time', async () => {
    const config = await load('cline-marketplace.json');
    // `memory` is the file's own name: the marketplace memory server takes more of its path.
    expect([...config.targets.keys()]).toEqual(['everything', 'modelcontextprotocol-memory', 'someone-everything', 'memory']);
    expect(target(config, 'everything')).toMatchObject({ type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] });
    expect(target(config, 'memory')).toMatchObject({ args: ['-y', 'my-own-memory'] });
    expect(config.warnings).toEqual([
      'server "github.com/modelcontextprotocol/servers/tree/main/src/everything" is served as "everything" (names are letters, digits, - and _; it becomes /servers/everything/mcp)',
      'server "github.com/modelcontextprotocol/servers/tree/main/src/memory" is served as "modelcontextprotocol-memory" (names are letters, digits, - and _; it becomes /servers/modelcontextprotocol-memory/mcp)',
      'server "github.com/someone/everything" is served as "someone-everything" (names are letters, digits, - and _; it becomes /servers/someone-everything/mcp)',
      'server "github.com/upstash/context7-mcp" is served as "context7-mcp" (names are letters, digits, - and _; it becomes /servers/context7-mcp/mcp)',
      'ignored key "autoApprove" (in "github.com/modelcontextprotocol/servers/tree/main/src/everything", "github.com/modelcontextprotocol/servers/tree/main/src/memory", "github.com/someone/everything", "github.com/upstash/context7-mcp", "memory"): Switchboard has no use for it',
    ]);
    expect([...(await load('cline-marketplace.json')).targets.keys()]).toEqual([...config.targets.keys()]);
  });

  it('a repository-path name alone marks a file as a client\'s (Cline writes no other key for a marketplace server)', () => {
    const config = parseConfig({ mcpServers: { 'github.com/modelcontextprotocol/servers/tree/main/src/everything': { command: 'npx', args: ['x'] } } }, { env });
    expect([...config.targets.keys()]).toEqual(['everything']);
    expect(config.warnings).toEqual([expect.stringContaining('is served as "everything"')]);
  });

  it('Cursor: url entries, with or without type, load as Switchboard\'s own format (no warnings)', async () => {
    const config = await load('cursor.json');
    expect(target(config, 'linear')).toMatchObject({ type: 'sse' });
    expect(target(config, 'hosted')).toMatchObject({ type: 'http', headers: { authorization: 'Bearer h-3' } });
    expect(config.warnings).toBeUndefined();
  });

  it('Windsurf: serverUrl is the url; disabledTools named', async () => {
    const config = await load('windsurf.json');
    expect(target(config, 'context')).toMatchObject({ type: 'http', url: 'https://context.example.com/mcp' });
    expect(config.warnings).toEqual(['ignored key "disabledTools" (in "context"): Switchboard has no use for it']);
  });

  it('Switchboard\'s own format stays strict: a typo is an error, not a warning', () => {
    expect(() => parseConfig({ mcpServers: { a: { command: 'x' } }, gateway: { prot: 1 } })).toThrow(/gateway/);
    expect(() => parseConfig({ mcpServers: { a: { command: 'x', timeoutMs: 'soon' } } })).toThrow(/timeoutMs/);
  });
});
