/**
 * The first-hour options of the real command: -e for a quick-mode server's environment, the
 * proxy and CA variables every server inherits, -V, and `switchboard validate`.
 */
import { describe, expect, it } from 'vitest';
import { endpointsOf, post, run, start, useCliProcesses, version, writeConfig, initializeAt } from '../support/cli.ts';
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
  });
});
