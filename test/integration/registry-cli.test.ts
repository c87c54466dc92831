/**
 * `switchboard registry search|add` as a real child process against a registry stand-in on a
 * loopback port (test/support/registry-server.ts, real server.json documents): what it writes
 * validates, the npm and remote entries serve through a real gateway to a real MCP SDK client, no
 * secret is ever written, and a registry that answers badly gets a clear error, never a crash.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointsOf, run, start, tempPath, useCliProcesses, writeConfig } from '../support/cli.ts';
import { startEverythingHttp, type RemoteUpstream } from '../support/remote-upstreams.ts';
import { startRegistry, type RegistryFixture } from '../support/registry-server.ts';

useCliProcesses();

let registry: RegistryFixture;
let remote: RemoteUpstream;

beforeAll(async () => {
  remote = await startEverythingHttp();
  registry = await startRegistry({ remoteUrl: remote.url });
});

afterAll(async () => {
  await registry?.close();
  await remote?.close();
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const add = (name: string, config: string, ...more: string[]) => run(['registry', 'add', name, '--config', config, '--registry', registry.url, ...more]);

/** Starts the gateway on the config, lists and calls `echo` through the SDK client, stops it. */
async function echoThrough(config: string, env: Record<string, string>, path: string): Promise<string> {
  const gateway = start(['--config', config, '--port', '0'], env);
  const endpoints = await endpointsOf(gateway, 30_000);
  const client = new Client({ name: 'registry-test', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoints.find((e) => e.endsWith(path)) ?? endpoints[0]!)));
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('echo');
    const result = await client.callTool({ name: 'echo', arguments: { message: 'from the registry' } });
    return JSON.stringify(result.content);
  } finally {
    await client.close();
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  }
}

describe('switchboard registry search', () => {
  it('lists the matching servers with what each offers', async () => {
    const result = await run(['registry', 'search', 'modelcontextprotocol', '--registry', registry.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('io.github.modelcontextprotocol/everything 2026.8.31  (npm)');
    expect(result.stdout).toContain('io.github.modelcontextprotocol/filesystem 2026.1.14  (npm, oci)');
    expect(result.stdout).not.toContain('github-mcp-server');
    expect(registry.requests.some((r) => r.startsWith('GET /v0.1/servers?search=modelcontextprotocol'))).toBe(true);
  });

  it('says so when nothing matches', async () => {
    const result = await run(['registry', 'search', 'no-such-thing', '--registry', registry.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('no server in the registry matches "no-such-thing"\n');
  });
});

describe('switchboard registry add', () => {
  it('npm: writes npx -y <package>@<version>, which validates and serves through the gateway', async () => {
    const config = tempPath('npm.yaml');
    const result = await add('io.github.modelcontextprotocol/everything', config);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`created ${config}: server "everything" (npm @modelcontextprotocol/server-everything@2026.8.31)`);
    const text = await readFile(config, 'utf8');
    expect(text).toContain('command: npx');
    expect(text).toMatch(/- -y\n\s+- "?@modelcontextprotocol\/server-everything@2026\.8\.31"?\n\s+- stdio/);
    expect((await run(['validate', config])).code).toBe(0);
    expect(await echoThrough(config, {}, '/mcp')).toContain('from the registry');
  }, 90_000);

  it('remote: a url target whose secret header is a ${VAR} reference, never the value; serves through the gateway', async () => {
    const config = await writeConfig('remote.yaml', '# our team gateway\ngateway:\n  port: 0\n');
    const result = await add('com.example.mcp/weather', config);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('set WEATHER_X_API_KEY (secret): API key from the weather dashboard');
    const text = await readFile(config, 'utf8');
    expect(text).toContain('# our team gateway');
    expect(text).toContain(`url: ${remote.url}`);
    expect(text).toContain('X-API-Key: ${WEATHER_X_API_KEY}');
    expect(text).toContain('X-Region: eu-west-1');
    expect(text).toContain('# WEATHER_X_API_KEY (secret): API key from the weather dashboard');
    expect(text).not.toContain('sk-never-written');
    const unset = await run(['validate', config]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('WEATHER_X_API_KEY');
    expect((await run(['validate', config], { WEATHER_X_API_KEY: 'k-123' })).code).toBe(0);
    expect(await echoThrough(config, { WEATHER_X_API_KEY: 'k-123' }, '/mcp')).toContain('from the registry');
  }, 90_000);

  it('PyPI: writes uvx <package>@<version>, leaving optional inputs out; validates', async () => {
    const config = tempPath('pypi.json');
    const result = await add('io.github.modelcontextprotocol/fetch', config);
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(await readFile(config, 'utf8')) as { mcpServers: Record<string, unknown> };
    expect(document.mcpServers.fetch).toEqual({ command: 'uvx', args: ['mcp-server-fetch@2025.4.7'] });
    expect((await run(['validate', config])).code).toBe(0);
  });

  it('OCI: docker run read-only, without new privileges, capped, the secret passed by name; validates', async () => {
    const config = tempPath('oci.yaml');
    const result = await add('io.github.github/github-mcp-server', config, '--type', 'oci', '--as', 'github');
    expect(result.code, result.stderr).toBe(0);
    const text = await readFile(config, 'utf8');
    for (const flag of ['--rm', '-i', '--read-only', 'no-new-privileges', '--memory', '--cpus']) expect(text).toContain(`- ${flag}`);
    expect(text).toMatch(/- -e\n\s+- GITHUB_PERSONAL_ACCESS_TOKEN\n\s+- -e\n\s+- GITHUB_TOOLSETS\n\s+- ghcr\.io\/github\/github-mcp-server:0\.20\.1\n\s+- stdio/);
    expect(text).toContain('GITHUB_PERSONAL_ACCESS_TOKEN: ${GITHUB_PERSONAL_ACCESS_TOKEN}');
    expect(text).toContain('GITHUB_TOOLSETS: repos,issues,pull_requests');
    expect((await run(['validate', config], { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x' })).code).toBe(0);
  });

  it('a remote header template keeps its fixed part and references the secret inside it', async () => {
    const config = tempPath('github-remote.yaml');
    const result = await add('io.github.github/github-mcp-server', config, '--type', 'remote');
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(config, 'utf8')).toContain('Authorization: Bearer ${GITHUB_MCP_SERVER_TOKEN}');
  });

  it('refuses what it cannot write, exit 2, leaving the file as it was', async () => {
    const config = await writeConfig('taken.yaml', 'mcpServers:\n  everything:\n    command: node\n');
    const taken = await add('io.github.modelcontextprotocol/everything', config);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('already has a server named "everything"; choose another with --as <name>');
    expect(await readFile(config, 'utf8')).toBe('mcpServers:\n  everything:\n    command: node\n');
    const bundle = await add('io.modelcontextprotocol/text-editor', tempPath('bundle.yaml'));
    expect(bundle.code).toBe(2);
    expect(bundle.stderr).toContain('offers nothing Switchboard can run (an npm, PyPI or OCI package, or a remote); it offers: mcpb');
    const badName = await add('io.github.modelcontextprotocol/everything', tempPath('bad.yaml'), '--as', 'two words');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('"two words" is not a valid server name');
    const unknown = await add('io.example/nothing', tempPath('unknown.yaml'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no server "io.example/nothing"');
  });

  it('a registry that answers badly is a clear error (exit 1), never a crash or a written file', async () => {
    const cases: [string, string][] = [
      ['/error', 'answered HTTP 500'],
      ['/text', 'not JSON'],
      ['/shape', 'not a registry answer'],
      ['/huge', 'more than 4 MiB'],
    ];
    for (const [path, said] of cases) {
      const result = await run(['registry', 'search', 'x', '--registry', `${registry.url}${path}`]);
      expect(result.code, `${path}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(said);
      expect(result.stderr).not.toContain('    at ');
    }
    const closed = await run(['registry', 'search', 'x', '--registry', `http://127.0.0.1:${await closedPort()}`]);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/cannot be reached \(ECONNREFUSED\)/);
    const usage = await run(['registry', 'search', 'x', '--registry', 'ftp://example']);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('must be http(s)');
  });
});
