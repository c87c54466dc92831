/**
 * The `switchboard` command as a real child process (`node src/cli.ts ...`, Node's type stripping):
 * exit codes, messages on stderr, and a running gateway that stops on signals.
 */
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { endpointsOf, fixture, initializeAt, post, run, start, tempPath, useCliProcesses, version, writeConfig } from '../support/cli.ts';
import { descendantsOf, isAlive, waitUntilGone } from '../support/processes.ts';

useCliProcesses();

describe('switchboard command line: answers without starting', () => {
  it('--help prints the usage and exits 0', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:/);
    expect(result.stdout).toContain('--config <file>');
    expect(result.stderr).toBe('');
  });

  it('--version prints the package version and exits 0', async () => {
    const result = await run(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it('exits 2 naming an unknown flag', async () => {
    const result = await run(['--prot', '80']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('switchboard: --prot: unknown option (see --help)\n');
    expect(result.stdout).toBe('');
  });

  it('exits 2 naming a bad flag value', async () => {
    const result = await run(['--port', 'eighty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('switchboard: --port: expected an integer from 0 to 65535\n');
  });

  it('exits 2 naming the file and key path of an unknown key', async () => {
    const path = await writeConfig('unknown-key.yaml', 'mcpServers:\n  everything:\n    command: node\n    timeout: 5\n');
    const result = await run(['--config', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`switchboard: ${path}: mcpServers.everything.timeout: unknown key\n`);
  });

  it('exits 2 listing every problem of an invalid config', async () => {
    const path = await writeConfig('invalid.json', JSON.stringify({ mcpServers: { a: { command: 'x', timeoutMs: 0 } }, gateway: { port: -1 } }));
    const result = await run(['-c', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('2 problems');
    expect(result.stderr).toContain('mcpServers.a.timeoutMs: expected a positive integer');
    expect(result.stderr).toContain('gateway.port: expected an integer from 0 to 65535');
  });

  it('exits 2 on bad YAML, with the line', async () => {
    const path = await writeConfig('bad.yaml', 'mcpServers:\n  a: { command: node\n');
    const result = await run(['--config', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^switchboard: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid YAML: .*line \\d+`));
  });

  it('exits 2 on a missing file', async () => {
    const result = await run(['--config', tempPath('nope.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nope.yaml: cannot read the config file (ENOENT');
  });

  it('exits 2 naming an unset variable and where it is used, and takes it from the environment', async () => {
    const path = await writeConfig('env.yaml', 'mcpServers: { a: { command: node } }\ngateway: { port: "${SB_TEST_PORT}" }\n');
    const unset = await run(['--config', path]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('gateway.port: environment variable SB_TEST_PORT is not set');
    const bad = await run(['--config', path], { SB_TEST_PORT: 'http' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('gateway.port: expected an integer from 0 to 65535, got a string');
  });
});

describe('switchboard command line: running a gateway', () => {
  it('serves the built-in default (server-everything) at /mcp and exits 0 on SIGTERM', async () => {
    const running = start(['--port', '0']);
    const endpoints = await endpointsOf(running);
    expect(endpoints).toHaveLength(2);
    expect(endpoints[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(endpoints[1]).toMatch(/\/servers\/everything\/mcp$/);
    await initializeAt(endpoints[0] ?? '');
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(running.stderr()).toBe('');
  });

  it('serves quick mode under the command name and exits 0 on SIGINT', async () => {
    const running = start(['--port', '0', '--log-level', 'info', '--', process.execPath, fixture, 'normal']);
    const endpoints = await endpointsOf(running);
    expect(endpoints[1]).toMatch(/\/servers\/node\/mcp$/);
    await initializeAt(endpoints[0] ?? '');
    running.child.kill('SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  });

  it('serves a config file, with --host and --port overriding it', async () => {
    const path = await writeConfig(
      'two.json',
      JSON.stringify({
        mcpServers: { first: { command: process.execPath, args: [fixture, 'normal'] }, second: { command: process.execPath, args: [fixture] } },
        gateway: { host: '0.0.0.0', port: 1 },
      }),
    );
    const running = start(['--config', path, '--host', '127.0.0.1', '--port', '0']);
    const endpoints = await endpointsOf(running);
    // Two servers: /mcp serves both at once (aggregate), then each alone.
    expect(endpoints.map((url) => new URL(url).pathname)).toEqual(['/mcp', '/servers/first/mcp', '/servers/second/mcp']);
    expect(new URL(endpoints[0] ?? '').hostname).toBe('127.0.0.1');
    await initializeAt(endpoints[2] ?? '');
    await initializeAt(endpoints[0] ?? '');
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });

  it('prints nothing on stdout at --log-level silent', async () => {
    // No log line to wait for: pick a free port, and wait until the gateway answers on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const running = start(['--port', String(port), '--log-level', 'silent', '--', process.execPath, fixture]);
    let up = false;
    for (let i = 0; i < 100 && !up && running.child.exitCode === null; i++) {
      up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (!up) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(up).toBe(true);
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
    expect(running.stdout()).toBe('');
  });

  it('still stops on a signal when whoever read its stdout has gone away (EPIPE)', async () => {
    const running = start(['--port', '0', '--', process.execPath, fixture]);
    await endpointsOf(running);
    // Nothing is logged between closing the pipe and the signal, so the first lines to hit the
    // broken pipe are those written while stopping, right before the exit.
    running.child.stdout.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    running.child.kill('SIGTERM');
    const exit = await Promise.race([running.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(running.stderr()).toBe('');
  });

  it('exits 1 when the port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const result = await run(['--port', String(port), '--', process.execPath, fixture]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^switchboard: cannot start the gateway: .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('SIGTERM leaves no descendant behind, not even one that called setsid', async () => {
    const running = start(['--port', '0', '--log-level', 'info', '--', process.execPath, fixture, 'spawn-escaping-grandchild']);
    const [url = ''] = await endpointsOf(running);
    await initializeAt(url);
    let grandchild = 0;
    for (let i = 0; i < 100 && grandchild === 0; i++) {
      grandchild = Number(/grandchild-pid=(\d+)/.exec(running.stdout())?.[1] ?? 0);
      if (grandchild === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(isAlive(grandchild)).toBe(true);
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(await waitUntilGone([grandchild], 5_000)).toEqual([]);
  });

  it('exits at once on a second signal while the first is still waiting, leaving no child behind', async () => {
    // A child that ignores SIGTERM and stdin closing, with long graces: the first signal's graceful
    // stop would take half a minute.
    const path = await writeConfig(
      'stubborn.json',
      JSON.stringify({
        mcpServers: { stubborn: { command: process.execPath, args: [fixture, 'ignore-sigterm'], shutdownGraceMs: 30_000 } },
        gateway: { shutdownGraceMs: 30_000 },
      }),
    );
    const running = start(['--config', path, '--port', '0']);
    const [url = ''] = await endpointsOf(running);
    const sessionId = await initializeAt(url);
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
    const inFlight = new AbortController();
    const call = post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 } } }, sessionId, inFlight.signal).catch(
      () => undefined,
    );
    const pid = running.child.pid ?? 0;
    const upstream = descendantsOf(pid);
    expect(upstream.length).toBeGreaterThan(0);

    running.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 750));
    expect(running.child.exitCode, 'the first signal should wait for the graceful stop').toBeNull();
    const second = Date.now();
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - second).toBeLessThan(3_000);
    expect(await waitUntilGone(upstream, 5_000)).toEqual([]);
    expect(upstream.some(isAlive)).toBe(false);
    inFlight.abort();
    await call;
  });
});
