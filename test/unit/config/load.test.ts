import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, isConfigError } from '../../../src/config/config-error.ts';
import { loadConfigFile, parseConfig } from '../../../src/config/load.ts';
import type { GatewayConfig, StdioTargetConfig } from '../../../src/config/types.ts';

const minimal = { mcpServers: { everything: { command: 'node', args: ['server.js'] } } };

function parse(document: unknown, env: Record<string, string> = {}): GatewayConfig {
  return parseConfig(document, { env, baseDir: '/srv/switchboard' });
}

/** The issues of the ConfigError that parsing throws, as `path: message` lines. */
function problems(document: unknown, env: Record<string, string> = {}): string[] {
  try {
    parse(document, env);
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return error.issues.map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`));
  }
  throw new Error('expected a ConfigError');
}

function target(config: GatewayConfig, name: string): StdioTargetConfig {
  const found = config.targets.get(name);
  if (found?.type !== 'stdio') throw new Error(`no stdio target ${name}`);
  return found;
}

describe('parseConfig: defaults', () => {
  it('fills every gateway default', () => {
    const config = parse(minimal);
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(config.allowedOrigins).toBeUndefined();
    expect(config.allowedHosts).toBeUndefined();
    expect(config.limits).toEqual({
      maxBodyBytes: 16 * 1024 * 1024,
      maxSessions: 1000,
      replayEvents: 512,
      replayBytes: 8 * 1024 * 1024,
      pendingServerMessages: 256,
      requestTimeoutMs: 30_000,
      maxConnections: 4_096,
      maxConnectionsPerAddress: 1_024,
      maxInflightPerSession: 256,
      maxInflight: 4_096,
    });
    expect(config.health).toEqual({ probeCacheMs: 10_000, probeTimeoutMs: 2_000 });
    expect(config.session).toEqual({ idleTtlMs: 1_800_000, keepAliveMs: 15_000, shortIdleTtlMs: 300_000, initDeadlineMs: 10_000, maxUninitialized: 64, evictIdleMs: 120_000, maxChildren: 128, maxChildrenPerTarget: 64, stateless: { hostsPerCaller: 4, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 256, maxParkedPerCaller: 16, maxParked: 1_024 } });
    expect(config.shutdownGraceMs).toBe(10_000);
    expect(config.logging).toEqual({ level: 'info', audit: false });
  });

  it('fills every target default', () => {
    expect(target(parse(minimal), 'everything')).toEqual({
      type: 'stdio',
      name: 'everything',
      command: 'node',
      args: ['server.js'],
      env: {},
      principalEnv: {},
      inheritEnv: [
        ...['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR'],
        ...['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy'],
        ...['NODE_EXTRA_CA_CERTS', 'NODE_USE_ENV_PROXY', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'PIP_CERT', 'GIT_SSL_CAINFO'],
        ...['npm_config_cafile', 'npm_config_proxy', 'npm_config_https_proxy', 'npm_config_registry'],
      ],
      cwd: undefined,
      timeouts: { requestMs: 300_000, resetOnProgress: true, maxTotalMs: 0, startupMs: 10_000 },
      restart: { onExit: 'end', maxRestarts: 3, initialBackoffMs: 250, maxBackoffMs: 10_000 },
      shutdownGraceMs: 2_000,
      maxMessageBytes: 32 * 1024 * 1024,
      stderrLinesPerSecond: 50,
      stderrInErrors: false,
      maxQueuedBytes: 16 * 1024 * 1024,
      upstream: { mode: 'per-session', children: 1, spares: 0 },
      circuitBreaker: { startFailures: 5, timeouts: 5, timeoutCallers: 2, windowMs: 60_000, cooldownMs: 10_000, maxCooldownMs: 300_000 },
    });
  });

  it('reads the shared upstream mode, and ignores children when per-session', () => {
    const shared = parse({ mcpServers: { s: { command: 'node', upstream: { mode: 'shared', children: '3' } } } });
    expect(target(shared, 's').upstream).toEqual({ mode: 'shared', children: 3, spares: 0 });
    expect(target(parse({ mcpServers: { s: { command: 'node', upstream: { mode: 'shared' } } } }), 's').upstream).toEqual({ mode: 'shared', children: 1, spares: 0 });
    expect(target(parse({ mcpServers: { s: { command: 'node', upstream: { children: 4 } } } }), 's').upstream).toEqual({ mode: 'per-session', children: 1, spares: 0 });
  });

  it('reads upstream.spares (0-8), refused in shared mode and with principalEnv, whose child depends on its caller', () => {
    expect(target(parse({ mcpServers: { s: { command: 'node', upstream: { spares: '2' } } } }), 's').upstream).toEqual({ mode: 'per-session', children: 1, spares: 2 });
    for (const spares of [-1, 9, 1.5]) {
      expect(() => parse({ mcpServers: { s: { command: 'node', upstream: { spares } } } })).toThrow(/mcpServers\.s\.upstream\.spares/);
    }
    expect(() => parse({ mcpServers: { s: { command: 'node', upstream: { mode: 'shared', spares: 1 } } } })).toThrow(
      /mcpServers\.s\.upstream\.spares: cannot be set with upstream.mode "shared"/,
    );
    expect(() => parse({ mcpServers: { s: { command: 'node', principalEnv: { WHO: '{sub}' }, upstream: { spares: 1 } } } })).toThrow(
      /mcpServers\.s\.upstream\.spares: cannot be set with principalEnv/,
    );
  });

  it('refuses an unknown sharing mode, a pool of 0 or 65 children, and unknown keys', () => {
    for (const upstream of [{ mode: 'pooled' }, { mode: 'shared', children: 0 }, { mode: 'shared', children: 65 }, { mode: 'shared', size: 2 }]) {
      expect(() => parse({ mcpServers: { s: { command: 'node', upstream } } })).toThrow(/mcpServers\.s\.upstream/);
    }
  });

  it('refuses stderrInErrors on a shared child, whose stderr carries every session\'s traffic', () => {
    expect(() => parse({ mcpServers: { s: { command: 'node', stderrInErrors: true, upstream: { mode: 'shared' } } } })).toThrow(
      /mcpServers\.s\.stderrInErrors: cannot be true with upstream.mode "shared"/,
    );
    expect(target(parse({ mcpServers: { s: { command: 'node', stderrInErrors: true } } }), 's').stderrInErrors).toBe(true);
  });

  it('fills section defaults around the keys that are given', () => {
    const config = parse({ ...minimal, gateway: { limits: { maxSessions: 5 }, session: { idleTtlMs: 1000 } } });
    expect(config.limits.maxSessions).toBe(5);
    expect(config.limits.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(config.session).toEqual({ idleTtlMs: 1000, keepAliveMs: 15_000, shortIdleTtlMs: 300_000, initDeadlineMs: 10_000, maxUninitialized: 64, evictIdleMs: 120_000, maxChildren: 128, maxChildrenPerTarget: 64, stateless: { hostsPerCaller: 4, hostIdleMs: 60_000, inputWaitMs: 120_000, maxListenStreams: 256, maxParkedPerCaller: 16, maxParked: 1_024 } });
  });

  it('maps every per-server key onto the target', () => {
    const config = parse({
      mcpServers: {
        a: {
          type: 'stdio',
          command: 'python',
          args: ['-m', 'srv'],
          env: { KEY: 'v' },
          cwd: '/opt/a',
          timeoutMs: 1000,
          resetTimeoutOnProgress: false,
          maxTotalTimeoutMs: 5000,
          startupTimeoutMs: 2000,
          onExit: 'restart',
          maxRestarts: 0,
          shutdownGraceMs: 0,
          maxMessageBytes: 1024,
          stderrLinesPerSecond: 0,
        },
      },
    });
    const a = target(config, 'a');
    expect(a.env).toEqual({ KEY: 'v' });
    expect(a.cwd).toBe('/opt/a');
    expect(a.timeouts).toEqual({ requestMs: 1000, resetOnProgress: false, maxTotalMs: 5000, startupMs: 2000 });
    expect(a.restart).toMatchObject({ onExit: 'restart', maxRestarts: 0 });
    expect([a.shutdownGraceMs, a.maxMessageBytes, a.stderrLinesPerSecond]).toEqual([0, 1024, 0]);
  });

  it('maps every gateway key', () => {
    const config = parse({
      ...minimal,
      gateway: {
        host: '0.0.0.0',
        port: 0,
        allowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
        allowedHosts: ['mcp.example.com', 'mcp.example.com:443'],
        limits: { maxBodyBytes: 1, maxSessions: 2, replayEvents: 0, replayBytes: 0, pendingServerMessages: 0, requestTimeoutMs: 5, maxConnections: 6, maxConnectionsPerAddress: 0, maxInflightPerSession: 7, maxInflight: 8 },
        session: { idleTtlMs: 3, keepAliveMs: 4, stateless: { hostsPerCaller: 7, hostIdleMs: 8, inputWaitMs: 9, maxListenStreams: 10, maxParkedPerCaller: 11, maxParked: 12 } },
        health: { probeCacheMs: 9, probeTimeoutMs: 10 },
        shutdownGraceMs: 0,
        logging: { level: 'silent' },
      },
    });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(config.allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(config.allowedHosts).toEqual(['mcp.example.com', 'mcp.example.com:443']);
    expect(config.limits).toEqual({ maxBodyBytes: 1, maxSessions: 2, replayEvents: 0, replayBytes: 0, pendingServerMessages: 0, requestTimeoutMs: 5, maxConnections: 6, maxConnectionsPerAddress: 0, maxInflightPerSession: 7, maxInflight: 8 });
    expect(config.health).toEqual({ probeCacheMs: 9, probeTimeoutMs: 10 });
    expect(config.session).toEqual({ idleTtlMs: 3, keepAliveMs: 4, shortIdleTtlMs: 300_000, initDeadlineMs: 10_000, maxUninitialized: 64, evictIdleMs: 120_000, maxChildren: 128, maxChildrenPerTarget: 64, stateless: { hostsPerCaller: 7, hostIdleMs: 8, inputWaitMs: 9, maxListenStreams: 10, maxParkedPerCaller: 11, maxParked: 12 } });
    expect(config.shutdownGraceMs).toBe(0);
    expect(config.logging.level).toBe('silent');
  });
});

describe('parseConfig: targets', () => {
  it('keeps config order and skips disabled servers', () => {
    const config = parse({
      mcpServers: { zeta: { command: 'z' }, off: { command: 'o', disabled: true }, alpha: { command: 'a', disabled: false } },
    });
    expect([...config.targets.keys()]).toEqual(['zeta', 'alpha']);
  });

  it('requires at least one enabled server', () => {
    expect(problems({ mcpServers: {} })).toEqual(['mcpServers: at least one enabled server is required']);
    expect(problems({ mcpServers: { a: { command: 'a', disabled: true } } })).toEqual([
      'mcpServers: at least one enabled server is required',
    ]);
  });

  it('accepts the names the URL pattern allows and rejects the rest', () => {
    const long = 'a'.repeat(64);
    expect([...parse({ mcpServers: { [long]: { command: 'x' }, '0_a-B': { command: 'x' } } }).targets.keys()]).toEqual([
      long,
      '0_a-B',
    ]);
    for (const bad of ['-a', '_a', 'a.b', 'a b', 'é', 'a'.repeat(65)]) {
      const [problem] = problems({ mcpServers: { [bad]: { command: 'x' } } });
      expect(problem).toContain('invalid server name');
    }
    // A path is how Cline's marketplace names servers (foreign.test.ts), unless the file is
    // Switchboard's own by its `gateway` key.
    expect(problems({ mcpServers: { 'a/b': { command: 'x' } }, gateway: {} })[0]).toContain('invalid server name');
  });

  it('resolves a relative cwd against the config folder and keeps an absolute one', () => {
    const config = parse({ mcpServers: { a: { command: 'x', cwd: 'servers/a' }, b: { command: 'x', cwd: '/abs' } } });
    expect(target(config, 'a').cwd).toBe('/srv/switchboard/servers/a');
    expect(target(config, 'b').cwd).toBe('/abs');
  });

  it('stringifies numbers and booleans in args and env (YAML writes them unquoted)', () => {
    const a = target(parse({ mcpServers: { a: { command: 'x', args: ['--port', 3000, true], env: { DEBUG: 1, ON: false } } } }), 'a');
    expect(a.args).toEqual(['--port', '3000', 'true']);
    expect(a.env).toEqual({ DEBUG: '1', ON: 'false' });
  });

  it('returns a frozen config', () => {
    const config = parse(minimal);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.limits)).toBe(true);
    expect(Object.isFrozen(target(config, 'everything'))).toBe(true);
    expect(Object.isFrozen(target(config, 'everything').args)).toBe(true);
    expect(Object.isFrozen(target(config, 'everything').timeouts)).toBe(true);
  });
});

describe('parseConfig: strictness, with key paths', () => {
  it('rejects unknown keys at every level, one line per key (nested sections first)', () => {
    expect(
      problems({
        mcpServers: { a: { command: 'x', timeout: 5 } },
        gateway: { prot: 1, limits: { maxBody: 1 }, session: { ttl: 1 }, logging: { lvl: 'x' } },
        servers: {},
      }),
    ).toEqual([
      'mcpServers.a.timeout: unknown key',
      'gateway.limits.maxBody: unknown key',
      'gateway.session.ttl: unknown key',
      'gateway.logging.lvl: unknown key',
      'gateway.prot: unknown key',
      'servers: unknown key',
    ]);
  });

  it('names the path and the expectation for bad numbers', () => {
    expect(problems({ mcpServers: { everything: { command: 'x', timeoutMs: 0 } } })).toEqual([
      'mcpServers.everything.timeoutMs: expected a positive integer',
    ]);
    expect(problems({ mcpServers: { everything: { command: 'x', timeoutMs: -1 } } })).toEqual([
      'mcpServers.everything.timeoutMs: expected a positive integer',
    ]);
    expect(problems({ mcpServers: { everything: { command: 'x', timeoutMs: 1.5 } } })).toEqual([
      'mcpServers.everything.timeoutMs: expected a positive integer, got 1.5',
    ]);
    expect(problems({ mcpServers: { a: { command: 'x', maxRestarts: -1 } } })).toEqual([
      'mcpServers.a.maxRestarts: expected a non-negative integer',
    ]);
    expect(problems({ ...minimal, gateway: { port: 65_536 } })).toEqual(['gateway.port: expected an integer from 0 to 65535']);
    expect(problems({ ...minimal, gateway: { port: 'http' } })).toEqual([
      'gateway.port: expected an integer from 0 to 65535, got a string',
    ]);
  });

  it('caps durations at the longest timer Node.js supports', () => {
    expect(parse({ mcpServers: { a: { command: 'x', timeoutMs: 2_147_483_647 } } }).targets.get('a')?.timeouts.requestMs).toBe(
      2_147_483_647,
    );
    const [problem] = problems({ mcpServers: { a: { command: 'x', timeoutMs: 2_147_483_648 } } });
    expect(problem).toMatch(/^mcpServers\.a\.timeoutMs: must be at most 2147483647/);
  });

  it('names the path for wrong types and missing keys', () => {
    expect(problems({ mcpServers: { a: { args: 'x' } } })).toEqual([
      'mcpServers.a.command: required',
      'mcpServers.a.args: expected a list of strings, got a string',
    ]);
    expect(problems({ mcpServers: { a: { command: 'x', env: { A: ['x'] } } } })).toEqual([
      'mcpServers.a.env.A: expected a string, got a list',
    ]);
    expect(problems({ mcpServers: { a: { command: '' } } })).toEqual(['mcpServers.a.command: must not be empty']);
    expect(problems({ mcpServers: { a: { command: 'x', disabled: 'yes' } } })).toEqual([
      'mcpServers.a.disabled: expected true or false, got a string',
    ]);
    expect(problems({ mcpServers: { a: { command: 'x', onExit: 'crash' } } })).toEqual([
      'mcpServers.a.onExit: expected "end" or "restart"',
    ]);
    expect(problems({ ...minimal, gateway: { logging: { level: 'verbose' } } })).toEqual([
      'gateway.logging.level: expected one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('quotes keys that are not plain identifiers in paths', () => {
    expect(problems({ mcpServers: { a: { command: 'x', env: { 'my.var': 3n } } } })).toEqual([
      'mcpServers.a.env["my.var"]: expected a string, got bigint',
    ]);
  });

  it('rejects an unknown server type, naming the known ones', () => {
    expect(problems({ mcpServers: { a: { type: 'websocket', url: 'https://x' } } })).toEqual(['mcpServers.a.type: expected "stdio" or "http" or "sse"']);
  });

  it('rejects a document that is not an object of servers', () => {
    expect(problems(null)).toEqual(['expected an object with an "mcpServers" key, got null']);
    expect(problems([])).toEqual(['expected an object with an "mcpServers" key, got a list']);
    expect(problems({})).toEqual(['mcpServers: required']);
    expect(problems({ mcpServers: ['a'] })).toEqual(['mcpServers: expected an object of servers by name, got a list']);
    expect(problems({ mcpServers: { a: 'node' } })).toEqual(['mcpServers.a: expected an object, got a string']);
  });

  it('validates origins and host names', () => {
    const expected = 'expected an origin such as https://app.example.com (scheme, host, optional port; no path or trailing slash) or "*"';
    expect(problems({ ...minimal, gateway: { allowedOrigins: ['https://a.example', 'https://b.example/', 'b.example', '**'] } })).toEqual([
      `gateway.allowedOrigins[1]: ${expected}`,
      `gateway.allowedOrigins[2]: ${expected}`,
      `gateway.allowedOrigins[3]: ${expected}`,
    ]);
    expect(parse({ ...minimal, gateway: { allowedOrigins: ['*'] } }).allowedOrigins).toEqual(['*']);
    expect(problems({ ...minimal, gateway: { allowedHosts: ['ok:1', 'http://x', '', '[::1]:8080', 'name:port', '::1'] } })).toEqual([
      'gateway.allowedHosts[1]: expected a host name with an optional port, such as example.com:8080',
      'gateway.allowedHosts[2]: must not be empty',
      // Entries the Host check could never match are refused, not ignored.
      'gateway.allowedHosts[4]: expected a host name with an optional port, such as example.com:8080',
      'gateway.allowedHosts[5]: expected a host name with an optional port, such as example.com:8080',
    ]);
  });

  it('reports every problem at once and says how many', () => {
    try {
      parseConfig({ mcpServers: { a: { command: 'x', timeoutMs: 0, nope: 1 } } }, { env: {}, source: 'x.yaml' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(
        'x.yaml: 2 problems\n  mcpServers.a.timeoutMs: expected a positive integer\n  mcpServers.a.nope: unknown key',
      );
    }
  });
});

describe('parseConfig: interpolation', () => {
  it('accepts numbers and booleans that come from the environment as strings', () => {
    const config = parse(
      {
        mcpServers: { a: { command: 'x', timeoutMs: '${T}', resetTimeoutOnProgress: '${R:-false}' } },
        gateway: { port: '${PORT:-8080}', limits: { maxSessions: '0010' } },
      },
      { T: '1500' },
    );
    expect(config.listen.port).toBe(8080);
    expect(config.limits.maxSessions).toBe(10);
    expect(target(config, 'a').timeouts).toMatchObject({ requestMs: 1500, resetOnProgress: false });
    expect(parse({ ...minimal, gateway: { port: '${PORT:-8080}' } }, { PORT: '9090' }).listen.port).toBe(9090);
  });

  it('does not accept number spellings that are not all digits', () => {
    for (const port of ['-1', '80.0', ' 80', '0x50', '1e3']) {
      expect(problems({ ...minimal, gateway: { port } })).toEqual(['gateway.port: expected an integer from 0 to 65535, got a string']);
    }
  });

  it('names the variable and the key path of an unset variable', () => {
    expect(problems({ mcpServers: { gh: { command: 'x', env: { TOKEN: '${GITHUB_TOKEN}' } } } })).toEqual([
      'mcpServers.gh.env.TOKEN: environment variable GITHUB_TOKEN is not set (use ${GITHUB_TOKEN:-default} to give a default)',
    ]);
  });

  it('does not require the variables of a disabled server, but still checks its keys', () => {
    const config = parse({
      mcpServers: {
        a: { command: 'x' },
        gh: { command: 'x', disabled: '${GH_OFF:-true}', env: { TOKEN: '${GITHUB_TOKEN}' } },
      },
    });
    expect([...config.targets.keys()]).toEqual(['a']);
    expect(problems({ mcpServers: { a: { command: 'x' }, gh: { command: 'x', disabled: true, tiemoutMs: 1 } } })).toEqual([
      'mcpServers.gh.tiemoutMs: unknown key',
    ]);
    expect(problems({ mcpServers: { a: { command: 'x' }, gh: { command: '${CMD}', disabled: '${GH_OFF}' } } }, { GH_OFF: 'false' })).toEqual([
      'mcpServers.gh.command: environment variable CMD is not set (use ${CMD:-default} to give a default)',
    ]);
  });

  it('interpolates gateway settings and reports their paths', () => {
    expect(parse({ ...minimal, gateway: { host: '${HOST:-0.0.0.0}' } }).listen.host).toBe('0.0.0.0');
    expect(problems({ ...minimal, gateway: { allowedOrigins: ['${ORIGIN}'] } })[0]).toMatch(/^gateway\.allowedOrigins\[0\]: environment variable ORIGIN/);
  });

  it('takes strings literally when interpolation is off (quick mode)', () => {
    const config = parseConfig({ mcpServers: { a: { command: 'x', args: ['${HOME}'] } } }, { interpolate: false });
    expect(target(config, 'a').args).toEqual(['${HOME}']);
  });
});

describe('loadConfigFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function write(name: string, text: string): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  }

  async function loadError(path: string, env: Record<string, string> = {}): Promise<string> {
    try {
      await loadConfigFile(path, { env });
    } catch (error) {
      if (isConfigError(error)) return error.message;
      throw error;
    }
    throw new Error('expected a ConfigError');
  }

  it('loads JSON, YAML and YML by extension', async () => {
    const json = await write('a.json', JSON.stringify(minimal));
    const yaml = await write('b.yaml', 'mcpServers:\n  everything:\n    command: node\n    args: [server.js]\n');
    const yml = await write('c.YML', 'mcpServers: { everything: { command: node } }\ngateway: { port: 1 }\n');
    expect([...(await loadConfigFile(json)).targets.keys()]).toEqual(['everything']);
    expect(target(await loadConfigFile(yaml), 'everything').args).toEqual(['server.js']);
    expect((await loadConfigFile(yml)).listen.port).toBe(1);
  });

  it('resolves a relative cwd against the folder of the file', async () => {
    const path = await write('cwd.yaml', 'mcpServers: { a: { command: node, cwd: sub } }\n');
    expect(target(await loadConfigFile(path), 'a').cwd).toBe(join(dir, 'sub'));
  });

  it('uses the env it is given', async () => {
    const path = await write('env.yaml', 'mcpServers: { a: { command: "${CMD}" } }\n');
    expect(target(await loadConfigFile(path, { env: { CMD: 'deno' } }), 'a').command).toBe('deno');
    expect(await loadError(path)).toContain('mcpServers.a.command: environment variable CMD is not set');
  });

  it('names the file for a missing file, an unknown extension and syntax errors', async () => {
    expect(await loadError(join(dir, 'missing.yaml'))).toMatch(/missing\.yaml: cannot read the config file \(ENOENT/);
    expect(await loadError(await write('x.toml', ''))).toMatch(/x\.toml: unsupported config file extension "\.toml"/);
    expect(await loadError(await write('bad.json', '{"mcpServers": {,}}'))).toMatch(/bad\.json: invalid JSON: /);
    expect(await loadError(await write('bad.yaml', 'mcpServers:\n  a: [unclosed\n'))).toMatch(/bad\.yaml: invalid YAML: .*line \d+, column \d+$/);
    expect(await loadError(await write('dup.yaml', 'mcpServers: {}\nmcpServers: {}\n'))).toMatch(/dup\.yaml: invalid YAML: .*unique/i);
  });

  it('names the file and the key path for invalid content', async () => {
    const path = await write('strict.yaml', 'mcpServers:\n  everything:\n    command: node\n    timeoutMs: soon\n');
    expect(await loadError(path)).toBe(`${path}: mcpServers.everything.timeoutMs: expected a positive integer, got a string`);
  });

  it('rejects an empty YAML file', async () => {
    expect(await loadError(await write('empty.yaml', ''))).toContain('expected an object with an "mcpServers" key');
  });
});
