/**
 * Every file in config/ is an example someone will copy: each must load. The folder is listed,
 * so a new example is covered without touching this test.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isConfigError } from '../../../src/config/config-error.ts';
import { loadConfigFile } from '../../../src/config/load.ts';
import type { StdioTargetConfig } from '../../../src/config/types.ts';
import { parseRunnerCall } from '../../../src/transport/package-spec.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const folder = join(root, 'config');
const files = readdirSync(folder).sort();

/** Every variable the examples require, with plausible values. */
const env = {
  SWITCHBOARD_PUBLIC_ORIGIN: 'https://agents.example.com',
  SWITCHBOARD_PUBLIC_HOST: 'mcp.example.com',
  GITHUB_TOKEN: 'ghp_example',
  SWITCHBOARD_CI_KEY: 'ci-key-0123456789abcdef',
  SWITCHBOARD_API_KEY: 'compose-key-0123456789abcdef',
  SWITCHBOARD_EXCHANGE_SECRET: 'exchange-secret-0123456789',
  SWITCHBOARD_CONSOLE_SECRET: 'console-secret-0123456789',
};

describe('config/ examples', () => {
  it('exist, and are all config files', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const file of files) expect(file).toMatch(/\.(json|ya?ml)$/);
  });

  it.each(files)('%s loads and serves at least one target', async (file) => {
    const config = await loadConfigFile(join(folder, file), { env });
    expect(config.targets.size).toBeGreaterThan(0);
    for (const target of config.targets.values()) {
      if (target.type !== 'stdio') continue;
      // Paths into node_modules are relative to the repository root, where the docs say to start.
      for (const arg of target.args.filter((a) => a.startsWith('./node_modules/'))) {
        expect(existsSync(resolve(root, arg)), `${file}: ${arg}`).toBe(true);
      }
    }
  });

  it('sandbox.yaml runs npx servers contained with the network off, their packages from a cache beside the file', async () => {
    const config = await loadConfigFile(join(folder, 'sandbox.yaml'), { env });
    for (const name of ['everything', 'files']) {
      const target = config.targets.get(name) as StdioTargetConfig;
      expect(target.sandbox, name).toMatchObject({ network: false });
      expect(parseRunnerCall(target.command, target.args), name).toMatchObject({ runner: 'npx', ecosystem: 'npm' });
      expect(target.timeouts.startupMs, `${name}: no long start-up timeout for a download`).toBeLessThanOrEqual(10_000);
    }
    expect(config.packages).toEqual({ cacheDir: join(folder, '.switchboard', 'packages'), install: true });
  });

  it('eras.yaml pins one http target to 2026 and lets the other be found out', async () => {
    const config = await loadConfigFile(join(folder, 'eras.yaml'), { env });
    const protocols = [...config.targets.values()].map((t) => (t.type === 'http' ? t.protocol : t.type));
    expect(protocols).toEqual(['2026', 'auto', 'stdio']);
  });

  it('hooks.yaml gives one server a closed, signed hook on both phases and redaction, the other an open one', async () => {
    const config = await loadConfigFile(join(folder, 'hooks.yaml'), { env: { HOOK_SECRET: 'a-secret-of-32-characters-at-least' } });
    const tools = config.targets.get('tools');
    expect(tools?.hooks).toMatchObject([{ methods: ['tools/call'], phase: 'both', timeoutMs: 1500, failureMode: 'closed', secret: 'a-secret-of-32-characters-at-least' }]);
    expect(tools?.redact).toEqual({ secrets: true, patterns: ['internal-ticket-[0-9]{6}'], marker: '[REDACTED]' });
    expect(config.targets.get('audited')?.hooks).toMatchObject([{ phase: 'request', failureMode: 'open', timeoutMs: 2000 }]);
    expect(config.targets.get('audited')?.redact).toBeUndefined();
  });

  it('production.yaml takes its settings from the environment', async () => {
    const path = join(folder, 'production.yaml');
    const config = await loadConfigFile(path, { env: { ...env, PORT: '9000', LOG_LEVEL: 'warn', GITHUB_DISABLED: 'true' } });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(config.allowedOrigins).toEqual(['https://agents.example.com']);
    expect(config.allowedHosts).toEqual(['mcp.example.com', 'localhost:9000']);
    expect(config.limits.maxSessions).toBe(200);
    expect(config.logging.level).toBe('warn');
    expect(config.audit).toMatchObject({ sinks: [{ type: 'log' }], recent: 1000, capture: { arguments: false, results: false } });
    expect([...config.targets.keys()]).toEqual(['everything']);

    const withGithub = await loadConfigFile(path, { env });
    expect((withGithub.targets.get('github') as StdioTargetConfig | undefined)?.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_example' });
    expect(withGithub.listen.port).toBe(8080);
  });

  it('production.yaml fails naming a required variable that is unset', async () => {
    const { SWITCHBOARD_PUBLIC_ORIGIN: _unset, ...partial } = env;
    const error: unknown = await loadConfigFile(join(folder, 'production.yaml'), { env: partial }).catch((e: unknown) => e);
    expect(isConfigError(error)).toBe(true);
    expect((error as Error).message).toContain('gateway.allowedOrigins[0]: environment variable SWITCHBOARD_PUBLIC_ORIGIN is not set');
  });

  it('remote-http.yaml and remote-sse.yaml take their URL and credential from the environment', async () => {
    const http = await loadConfigFile(join(folder, 'remote-http.yaml'), {
      env: { REMOTE_MCP_URL: 'https://mcp.example.com/mcp', REMOTE_MCP_TOKEN: 't0k' },
    });
    expect(http.targets.get('remote')).toMatchObject({ type: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer t0k' } });
    const sse = await loadConfigFile(join(folder, 'remote-sse.yaml'), { env: {} });
    expect(sse.targets.get('legacy')).toMatchObject({ type: 'sse', url: 'http://127.0.0.1:3002/sse', headers: { 'x-api-key': 'dev-key' } });
  });

  it('pinning.yaml blocks by default, warns for one server, and keeps its pins beside the config', async () => {
    const config = await loadConfigFile(join(folder, 'pinning.yaml'), { env });
    expect(config.pinning).toEqual({ mode: 'block', file: join(folder, 'switchboard-pins.json'), maxItems: 10_000, maxPending: 256 });
    expect([...config.targets.values()].map((t) => t.pinning)).toEqual(['block', 'warn']);
    // Without gateway.pinning a target carries no mode at all: nothing is hashed.
    const plain = await loadConfigFile(join(folder, 'everything.yaml'), { env });
    expect(plain.targets.get('everything')?.pinning).toBeUndefined();
  });

  it('claude-desktop.json keeps config order and skips the disabled server', async () => {
    const config = await loadConfigFile(join(folder, 'claude-desktop.json'), { env: {} });
    expect([...config.targets.keys()]).toEqual(['everything', 'filesystem']);
  });

  it('auth.yaml turns authentication on and holds only the hash of the key it was given', async () => {
    const config = await loadConfigFile(join(folder, 'auth.yaml'), { env });
    expect(config.auth).toMatchObject({
      anonymous: false,
      publicUrl: 'https://agents.example.com',
      apiKeyHeader: 'authorization',
      scopes: ['mcp'],
      authorizationServers: ['https://auth.example.com/'],
      jwt: { issuers: ['https://auth.example.com/'], algorithms: ['RS256', 'ES256'], clockSkewSec: 60, jwksRefetchSec: 30 },
    });
    expect(config.auth?.apiKeys).toEqual([{ name: 'ci', sha256: createHash('sha256').update(env.SWITCHBOARD_CI_KEY).digest('hex'), scopes: ['mcp'] }]);
    expect(JSON.stringify(config)).not.toContain(env.SWITCHBOARD_CI_KEY);
    expect(config.admin?.console).toEqual({ enabled: true, clientId: 'switchboard-console', clientSecret: env.SWITCHBOARD_CONSOLE_SECRET, sessionTtlSec: 28_800 });
    // Kind lists left out: all names in an allow rule, none in a deny rule that names a kind.
    expect(config.policy?.rules[1]).toEqual({ effect: 'deny', principals: ['*'], scopes: [], claims: {}, servers: ['*'], tools: ['trigger-long-running-operation'], prompts: [], resources: [] });
    expect(config.policy?.rules[2]).toMatchObject({ principals: ['key:ci'], tools: ['echo', 'get-sum'], prompts: ['*'], resources: ['*'] });
  });


  it('token-exchange.yaml exchanges tokens for its remote servers and matches claims in its policy', async () => {
    const config = await loadConfigFile(join(folder, 'token-exchange.yaml'), { env });
    expect(config.targets.get('crm')).toMatchObject({ tokenExchange: { clientId: 'switchboard', clientSecret: env.SWITCHBOARD_EXCHANGE_SECRET, resource: 'https://crm.example.com/mcp', scope: 'crm.read crm.write' } });
    expect(config.targets.get('admin')).toMatchObject({ tokenExchange: { audience: 'admin-api', resource: undefined } });
    expect(config.auth?.jwt).toMatchObject({ jwksMinCacheSec: 60, jwksMaxCacheSec: 3600 });
    expect(config.policy?.rules.map((r) => r.claims)).toEqual([{}, { groups: ['admins'] }, { groups: ['contractors'] }]);
  });

  it('auth-api-keys.yaml and auth-anonymous.yaml: keys only, and anonymous said explicitly', async () => {
    const keys = await loadConfigFile(join(folder, 'auth-api-keys.yaml'), { env });
    expect(keys.auth).toMatchObject({ anonymous: false, jwt: undefined });
    expect(keys.auth?.apiKeys.map((k) => k.name)).toEqual(['ci', 'nightly']);
    const anonymous = await loadConfigFile(join(folder, 'auth-anonymous.yaml'), { env });
    expect(anonymous.auth).toMatchObject({ anonymous: true });
  });
});
