/**
 * The first-hour options of the real command: -e for a quick-mode server's environment, the
 * proxy and CA variables every server inherits, -V, `switchboard validate`, and stopping with
 * whatever started it.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cli, endpointsOf, initializeAt, post, run, start, useCliProcesses, version, writeConfig } from '../support/cli.ts';
import { descendantsOf, isAlive, killTree, readStat, waitUntilGone } from '../support/processes.ts';
import { fixture } from '../support/recorder.ts';

useCliProcesses();

async function getenv(url: string, sessionId: string, name: string): Promise<string> {
  const answer = await post(url, { jsonrpc: '2.0', id: name, method: 'tools/call', params: { name: 'getenv', arguments: { name } } }, sessionId);
  const body = (await answer.json()) as { result: { content: Array<{ text: string }> } };
  return body.result.content[0]?.text ?? '';
}

describe('switchboard quick mode: the server\'s environment', () => {
  it('-e KEY=VALUE and -e KEY reach the server; CA and proxy variables are inherited; other secrets are not', async () => {
    const running = start(
      ['--port', '0', '-e', 'SB_SET=set-on-the-command-line', '-e', 'SB_PASSED', '--', process.execPath, fixture('recorder-server.mjs')],
      { SB_PASSED: 'passed-from-env', NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem', HTTPS_PROXY: 'http://proxy.internal:3128', SB_GATEWAY_SECRET: 'keep-me' },
    );
    const [url = ''] = await endpointsOf(running);
    const sessionId = await initializeAt(url);
    expect(await getenv(url, sessionId, 'SB_SET')).toBe('set-on-the-command-line');
    expect(await getenv(url, sessionId, 'SB_PASSED')).toBe('passed-from-env');
    expect(await getenv(url, sessionId, 'NODE_EXTRA_CA_CERTS')).toBe('/etc/ssl/extra.pem');
    expect(await getenv(url, sessionId, 'HTTPS_PROXY')).toBe('http://proxy.internal:3128');
    expect(await getenv(url, sessionId, 'SB_GATEWAY_SECRET')).toBe('(unset)');
    running.child.kill('SIGTERM');
    await running.exited;
  });

  it('-e naming an unset variable exits 2 and says which', async () => {
    const result = await run(['-e', 'SB_NOT_SET_ANYWHERE', '--', 'node']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SB_NOT_SET_ANYWHERE is not set in this environment');
  });
});

describe('switchboard -V and validate', () => {
  it('-V prints the version', async () => {
    const result = await run(['-V']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('validate: exit 0 and what it serves for a good file; exit 2 with the start-up message for a bad one', async () => {
    const good = await writeConfig('good.yaml', 'mcpServers:\n  a: { command: node, args: [server.js] }\n  b: { url: "https://mcp.example.com/mcp" }\n');
    const ok = await run(['validate', good]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('config OK: 2 server(s)');
    expect(ok.stdout).toContain('a: stdio, node');
    expect(ok.stdout).toContain('b: http, https://mcp.example.com');
    const bad = await writeConfig('bad.yaml', 'mcpServers:\n  a: { command: node, timeoutMs: -1 }\n');
    const refused = await run(['validate', bad]);
    const started = await run(['--config', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('mcpServers.a.timeoutMs');
    expect(refused.stderr).toBe(started.stderr);
  }, 90_000); // three start-ups of the command in a row (Node strips the types of every source file each time)
});

describe('switchboard under npm: it stops with whatever started it', () => {
  it('when the process that started it dies (npm did not pass the signal on), it stops and frees its port', async () => {
    // What `npm start` builds: a shell (that does not exec) under npm, the gateway under the shell.
    const shell = spawn('/bin/sh', ['-c', `"${process.execPath}" "${cli}" --port 0 -- "${process.execPath}" "${fixture('recorder-server.mjs')}"; true`], {
      env: { ...process.env, npm_lifecycle_event: 'start' },
    });
    // Pass or fail, nothing of it outlives the test: once the shell is gone its descendants are
    // found only through the pids noted here.
    const started: number[] = [];
    try {
      let out = '';
      shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      await expect.poll(() => /"endpoints":\["([^"]+)"/.exec(out)?.[1], { timeout: 60_000 }).toBeDefined();
      const url = /"endpoints":\["([^"]+)"/.exec(out)?.[1] as string;
      const gateway = descendantsOf(shell.pid as number).find((pid) => readStat(pid)?.ppid === shell.pid) as number;
      started.push(gateway);
      expect(isAlive(gateway)).toBe(true);
      await initializeAt(url);
      const upstream = descendantsOf(gateway);
      started.push(...upstream);
      expect(upstream.length).toBeGreaterThan(0);

      shell.kill('SIGKILL'); // the signal never reaches the gateway
      // It polls its parent every 500 ms, then shuts down its child: seconds on a loaded machine.
      expect(await waitUntilGone([gateway, ...upstream], 30_000)).toEqual([]);
      await expect(fetch(url, { method: 'POST' })).rejects.toThrow();
    } finally {
      killTree(shell.pid);
      for (const pid of started) killTree(pid);
    }
  }, 120_000);
});
