/**
 * Regenerates bench/fixtures/catalog-tools.json: the tools/list of real MCP servers from npm, the
 * realistic catalog of the progressive discovery measurements (bench/discovery.ts) and tests
 * (test/integration/discovery.test.ts). Installs the servers into a temporary folder (never into
 * a package.json), starts each over stdio with placeholder settings (no credentials: every one of
 * them lists its tools without reaching its service), reads every page of tools/list with the SDK
 * client, and writes name, version and tools per server.
 *
 *   npx node bench/capture-catalog.ts [--dir <folder with node_modules already installed>]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';

const LIST = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }).passthrough();

/** Server name -> npm package, extra arguments and placeholder environment. */
const SERVERS: Record<string, { pkg: string; args?: string[]; env?: Record<string, string> }> = {
  everything: { pkg: '@modelcontextprotocol/server-everything', args: ['stdio'] },
  filesystem: { pkg: '@modelcontextprotocol/server-filesystem', args: [tmpdir()] },
  memory: { pkg: '@modelcontextprotocol/server-memory' },
  thinking: { pkg: '@modelcontextprotocol/server-sequential-thinking' },
  github: { pkg: '@modelcontextprotocol/server-github', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'placeholder' } },
  gitlab: { pkg: '@modelcontextprotocol/server-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'placeholder' } },
  slack: { pkg: '@modelcontextprotocol/server-slack', env: { SLACK_BOT_TOKEN: 'placeholder', SLACK_TEAM_ID: 'T0000' } },
  postgres: { pkg: '@modelcontextprotocol/server-postgres', args: ['postgresql://127.0.0.1:1/none'] },
  puppeteer: { pkg: '@modelcontextprotocol/server-puppeteer' },
  brave: { pkg: '@modelcontextprotocol/server-brave-search', env: { BRAVE_API_KEY: 'placeholder' } },
  maps: { pkg: '@modelcontextprotocol/server-google-maps', env: { GOOGLE_MAPS_API_KEY: 'placeholder' } },
  // server-redis exits when it cannot reach Redis at start: it is left out.
};

const at = process.argv.indexOf('--dir');
let dir = at > 0 ? (process.argv[at + 1] as string) : undefined;
if (dir === undefined) {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-catalog-'));
  execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' });
  execFileSync('npm', ['install', '--no-audit', '--no-fund', ...Object.values(SERVERS).map((s) => s.pkg)], { cwd: dir, stdio: 'inherit', env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1' } });
}

const out: Record<string, { package: string; version: string; tools: unknown[] }> = {};
for (const [name, server] of Object.entries(SERVERS)) {
  const root = join(dir, 'node_modules', server.pkg);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> | string };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (Object.values(pkg.bin)[0] as string);
  const client = new Client({ name: 'catalog-capture', version: '1' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(root, bin), ...(server.args ?? [])], env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' });
  try {
    await client.connect(transport);
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      // Unvalidated: a server whose schema the SDK would refuse (gitlab's) is still a real catalog.
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, LIST);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    out[name] = { package: server.pkg, version: pkg.version, tools };
    process.stderr.write(`${name}: ${tools.length} tools\n`);
  } catch (err) {
    process.stderr.write(`${name}: left out (${err instanceof Error ? err.message : String(err)})\n`);
  } finally {
    await client.close().catch(() => undefined);
  }
}
writeFileSync(new URL('fixtures/catalog-tools.json', import.meta.url), `${JSON.stringify(out, null, 1)}\n`);
