/**
 * The config deploy/compose.yaml mounts, run for real (the command as a child process, on
 * loopback instead of 0.0.0.0 and a free port instead of 8080): the compose healthcheck's own
 * command succeeds against it without a credential, and an MCP route refuses a client without the
 * API key and serves one with it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { endpointsOf, initialize, root, start, useCliProcesses } from '../support/cli.ts';

useCliProcesses();

const compose = parseYaml(readFileSync(join(root, 'deploy', 'compose.yaml'), 'utf8')) as {
  services: { switchboard: { healthcheck: { test: string[] } } };
};
const key = 'compose-key-0123456789abcdef';

/** POST with a Host header of our choosing (fetch will not set Host). */
function postAs(url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the compose deployment config, run', () => {
  it('passes its healthcheck, and its MCP route needs the API key', async () => {
    const gateway = start(['--config', join(root, 'config', 'container.yaml'), '--host', '127.0.0.1', '--port', '0'], {
      SWITCHBOARD_API_KEY: key,
      SWITCHBOARD_PUBLIC_HOST: 'localhost:8080',
    });
    const [endpoint] = await endpointsOf(gateway);
    const url = new URL(endpoint ?? '');
    // The healthcheck as compose runs it ("CMD", argv...), with the port the gateway got.
    const [kind, command, ...args] = compose.services.switchboard.healthcheck.test;
    expect(kind).toBe('CMD');
    expect(command).toBe('node');
    const argv = args.map((a) => a.replace('127.0.0.1:8080', `127.0.0.1:${url.port}`));
    await expect(promisify(execFile)(process.execPath, argv, { timeout: 10_000 })).resolves.toBeDefined();

    const mcp = new URL('/mcp', url);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', host: 'localhost:8080' };
    const anonymous = await postAs(mcp, headers, JSON.stringify(initialize));
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'GW_UNAUTHORIZED' } } });
    const keyed = await postAs(mcp, { ...headers, authorization: `Bearer ${key}` }, JSON.stringify(initialize));
    expect(keyed.status).toBe(200);
    expect(keyed.text).toContain('"protocolVersion"');
    // Another Host than the configured public name is refused (DNS-rebinding protection).
    const foreign = await postAs(mcp, { ...headers, host: `127.0.0.1:${url.port}`, authorization: `Bearer ${key}` }, JSON.stringify(initialize));
    expect(foreign.status).toBe(403);
    gateway.child.kill('SIGTERM');
    expect((await gateway.exited).code).toBe(0);
  });
});
