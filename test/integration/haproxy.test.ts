/**
 * Debian's HAProxy in front of real gateway processes, configured as deploy/cluster/haproxy.cfg is
 * (round robin, `option httpchk GET /readyz`, `http-check expect status 200`): requests alternate
 * between the ready replicas; a replica whose /readyz answers 503 while its /healthz answers 200
 * (its only upstream unreachable) gets none; a replica told to stop (SIGTERM: /readyz 503 while it
 * drains) leaves the rotation and the other one serves everything.
 *
 * Only requests that need no session state cross replicas here (each `initialize` starts a new
 * session wherever it lands): serving a session from any replica is the cluster's work, tested
 * with it.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { endpointsOf, initialize, start, useCliProcesses, writeConfig } from '../support/cli.ts';
import { freePort, startHaproxy, useHaproxy } from '../support/haproxy.ts';
import { recorderServer } from '../support/recorder.ts';

useCliProcesses();
useHaproxy();

/** The public name clients send through the load balancer; each gateway accepts only it. */
const PUBLIC_HOST = 'mcp.test';

/** POST with our Host (fetch will not set one), as a client reaching the load balancer by name. */
function postAs(url: URL, body: unknown): Promise<{ status: number; servedBy: string; text: string }> {
  const headers = { host: PUBLIC_HOST, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, servedBy: String(res.headers['x-served-by'] ?? ''), text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function gatewayConfig(server: string): string {
  return `gateway:\n  allowedHosts: ["${PUBLIC_HOST}"]\n  shutdownGraceMs: 5000\nmcpServers:\n${server}`;
}

async function initializeThrough(url: URL, times: number): Promise<string[]> {
  const servedBy: string[] = [];
  for (let i = 0; i < times; i++) {
    const answer = await postAs(new URL('/mcp', url), initialize);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toContain('"protocolVersion"');
    servedBy.push(answer.servedBy);
  }
  return servedBy;
}

describe('HAProxy in front of gateway replicas, checking /readyz', () => {
  it('round-robins over the ready replicas, never the unready one, and drops one that drains', async () => {
    const recorder = recorderServer();
    const stdio = `  fx:\n    command: ${JSON.stringify(recorder.command)}\n    args: ${JSON.stringify(recorder.args)}\n`;
    // Nothing listens at this port: the gateway's only upstream is unreachable, /readyz says 503.
    const dead = `  far:\n    type: http\n    url: http://127.0.0.1:${await freePort()}/mcp\n`;
    const ready = await writeConfig('ready.yaml', gatewayConfig(stdio));
    const unready = await writeConfig('unready.yaml', gatewayConfig(dead));
    const [a, b, c] = [ready, ready, unready].map((config) => start(['--config', config, '--port', '0']));
    if (a === undefined || b === undefined || c === undefined) throw new Error('three gateways');
    const [urlA, urlB, urlC] = await Promise.all([a, b, c].map(async (g) => (await endpointsOf(g))[0] ?? ''));
    expect((await fetch(new URL('/healthz', urlC))).status).toBe(200);

    const lb = await startHaproxy({
      backends: [
        { name: 'a', url: urlA ?? '' },
        { name: 'b', url: urlB ?? '' },
        { name: 'c', url: urlC ?? '' },
      ],
    });
    await lb.waitFor({ a: 'UP', b: 'UP', c: 'DOWN' });
    // c answered its check (layer 7), with a status other than 200: not a refused connection.
    expect((await lb.states()).c?.check).toBe('L7STS');

    const before = await initializeThrough(lb.url, 4);
    expect(before.filter((s) => s === 'a')).toHaveLength(2);
    expect(before.filter((s) => s === 'b')).toHaveLength(2);

    // SIGTERM: a drains (/readyz 503) and exits; HAProxy takes it out, b serves everything.
    a.child.kill('SIGTERM');
    await lb.waitFor({ a: 'DOWN' });
    expect(await initializeThrough(lb.url, 3)).toEqual(['b', 'b', 'b']);
    expect((await a.exited).code).toBe(0);
    expect(await initializeThrough(lb.url, 1)).toEqual(['b']);
  });
});
