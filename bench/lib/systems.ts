/**
 * The systems under test, each started fresh in its own process(es) for every measurement:
 *
 *   direct              the load generator on the echo server's pipes (one child per session)
 *   direct-http         the echo server on plain node:http (echo-http.mjs; WebSocket at /ws)
 *   floor-relay         the least a stdio gateway must do (floor-relay.mjs): node:http, a child per
 *                       session, each call re-id'd, written to the child, its answer parsed and
 *                       returned; no validation, auth or logging. The floor the gateway is held to.
 *   switchboard         src/cli.ts with the stdio echo server, a child per session (the default)
 *   switchboard-shared  the same with `upstream: { mode: shared }`: sessions share a pool of children
 *   switchboard-spare   switchboard with `upstream: { spares: 2 }`: two children started ahead of need
 *   switchboard-apikey  switchboard with `gateway.auth` and an API key on every request
 *   switchboard-jwt     switchboard with `gateway.auth` and an ES256 JWT (static key) on every request
 *   switchboard-http    src/cli.ts in front of echo-http.mjs (`type: http`); unavailable on a
 *                       gateway without remote upstreams (the config is refused at start)
 *   supergateway        supergateway --stateful, stdio -> Streamable HTTP (npm, bench/package.json)
 *   mcp-proxy           punkpeye mcp-proxy, stdio -> Streamable HTTP (npm, bench/package.json)
 *
 *   switchboard-before        `switchboard` on another build's src/cli.ts (`--before`, `--before-ref`)
 *   switchboard-spare-before  `switchboard-spare` on that build: the same scenarios, side by side
 *
 * Every process is tracked (spawn.ts); `killAll` runs on every exit path of the benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, start, stopTree, waitForLine, waitForPort } from './spawn.ts';

export { killAll, ROOT, Unavailable } from './spawn.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
export const ECHO_SERVER = here('../echo-server.mjs');
export const ECHO_HTTP = here('../echo-http.mjs');
export const FLOOR_RELAY = here('../floor-relay.mjs');
export const FLOOR_PROXY = here('../floor-proxy.mjs');
/** BENCH_CLI: another checkout's src/cli.ts (before/after comparisons of a change). */
export const CLI = process.env.BENCH_CLI ?? here('../../src/cli.ts');
const SUPERGATEWAY = here('../node_modules/supergateway/dist/index.js');
const MCP_PROXY = here('../node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs');
const NODE = process.execPath;

export const SYSTEM_NAMES = ['direct', 'direct-http', 'floor-relay', 'switchboard', 'switchboard-shared', 'switchboard-spare', 'switchboard-http', 'switchboard-apikey', 'switchboard-jwt', 'supergateway', 'mcp-proxy', 'switchboard-before', 'switchboard-spare-before'] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];

export interface RunningSystem {
  readonly name: SystemName;
  /** Streamable HTTP endpoint; undefined for `direct`. */
  readonly url: string | undefined;
  /** WebSocket endpoint, where the system has one. */
  readonly wsUrl: string | undefined;
  /** Server-side process roots (their descendants count too). */
  readonly roots: number[];
  /** The gateway process alone; for direct-http the HTTP server. */
  readonly gatewayPid: number | undefined;
  /** Headers every HTTP request carries (a credential). */
  readonly headers?: Record<string, string>;
  stop(): Promise<void>;
}

/** A bench server script that prints `{"url": ...}` once listening (echo-http.mjs, floor-relay.mjs, floor-proxy.mjs). */
export async function startScript(script: string, what: string, args: readonly string[] = []): Promise<{ child: ChildProcess; url: string; ws: string | undefined }> {
  const child = start(NODE, [script, ...args]);
  const line = await waitForLine(child, what, (text) => {
    try {
      return typeof (JSON.parse(text) as { url?: string }).url === 'string' ? text : undefined;
    } catch {
      return undefined;
    }
  });
  const { url, ws } = JSON.parse(line) as { url: string; ws?: string };
  return { child, url, ws };
}
const startEchoHttp = () => startScript(ECHO_HTTP, 'echo-http');

export interface GatewayOptions {
  /** Children per shared pool (switchboard-shared). */
  sharedChildren: number;
  /** Extra node flags for the gateway (e.g. --cpu-prof). */
  nodeFlags: readonly string[];
  /** The other build's src/cli.ts, for the `-before` systems. */
  beforeCli?: string | undefined;
}

/** src/cli.ts with one target `echo`; the URL comes from its start-up log line. */
async function startSwitchboard(server: Record<string, unknown>, options: GatewayOptions, gatewayExtra: Record<string, unknown> = {}, cli = CLI): Promise<{ child: ChildProcess; base: string }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'switchboard-bench-'));
  const file = join(dir, 'config.json');
  const config = {
    mcpServers: { echo: server },
    // 2,000 sessions: the ramp opens 1,000 and the default cap is exactly that. The ramp measures
    // what 1,000 live sessions cost, so the child caps (which would end idle ones) are lifted too.
    gateway: {
      host: '127.0.0.1',
      port: 0,
      limits: { maxSessions: 2_000 },
      session: { maxChildren: 2_000, maxChildrenPerTarget: 2_000 },
      logging: { level: 'info' },
      ...gatewayExtra,
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  const child = start(NODE, [...options.nodeFlags, cli, '--config', file]);
  // The folder lives as long as the gateway that reads (and may reload) its config.
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const endpoint = await waitForLine(child, 'switchboard', (line) => {
    try {
      const entry = JSON.parse(line) as { endpoints?: string[] };
      return entry.endpoints?.find((e) => e.includes('/servers/echo/'));
    } catch {
      return undefined;
    }
  });
  return { child, base: endpoint.slice(0, endpoint.indexOf('/servers/echo/')) };
}

export async function startSystem(name: SystemName, options: GatewayOptions): Promise<RunningSystem> {
  const echoArgs = [ECHO_SERVER];
  switch (name) {
    case 'direct':
      return { name, url: undefined, wsUrl: undefined, roots: [], gatewayPid: undefined, stop: async () => undefined };
    case 'direct-http': {
      const { child, url, ws } = await startEchoHttp();
      const pid = child.pid as number;
      return { name, url, wsUrl: ws, roots: [pid], gatewayPid: pid, stop: () => stopTree(child) };
    }
    case 'floor-relay': {
      const { child, url } = await startScript(FLOOR_RELAY, 'floor-relay');
      const pid = child.pid as number;
      return { name, url, wsUrl: undefined, roots: [pid], gatewayPid: pid, stop: () => stopTree(child) };
    }
    case 'switchboard':
    case 'switchboard-spare':
    case 'switchboard-shared':
    case 'switchboard-before':
    case 'switchboard-spare-before': {
      const server: Record<string, unknown> = { command: NODE, args: echoArgs };
      if (name === 'switchboard-shared') server.upstream = { mode: 'shared', children: options.sharedChildren };
      if (name === 'switchboard-spare' || name === 'switchboard-spare-before') server.upstream = { spares: 2 };
      const before = name.endsWith('-before');
      if (before && options.beforeCli === undefined) throw new Error(`${name} needs --before or --before-ref`);
      const { child, base } = await startSwitchboard(server, options, {}, before ? options.beforeCli : CLI);
      const pid = child.pid as number;
      return {
        name,
        url: `${base}/servers/echo/mcp`,
        wsUrl: `${base.replace(/^http/, 'ws')}/servers/echo/ws`,
        roots: [pid],
        gatewayPid: pid,
        stop: () => stopTree(child),
      };
    }
    case 'switchboard-apikey':
    case 'switchboard-jwt': {
      const { auth, headers } = await benchAuth(name);
      // The audit line per call (on by default with auth) is measured apart: BENCH_AUDIT=on.
      const logging = { level: 'info', audit: process.env.BENCH_AUDIT === 'on' ? 'on' : 'off' };
      const { child, base } = await startSwitchboard({ command: NODE, args: echoArgs }, options, { auth, logging });
      const pid = child.pid as number;
      return { name, url: `${base}/servers/echo/mcp`, wsUrl: undefined, roots: [pid], gatewayPid: pid, headers, stop: () => stopTree(child) };
    }
    case 'switchboard-http': {
      const upstream = await startEchoHttp();
      try {
        const { child, base } = await startSwitchboard({ type: 'http', url: upstream.url }, options);
        const pid = child.pid as number;
        return {
          name,
          url: `${base}/servers/echo/mcp`,
          wsUrl: `${base.replace(/^http/, 'ws')}/servers/echo/ws`,
          roots: [pid, upstream.child.pid as number],
          gatewayPid: pid,
          stop: async () => {
            await stopTree(child);
            await stopTree(upstream.child);
          },
        };
      } catch (err) {
        await stopTree(upstream.child);
        throw err;
      }
    }
    case 'supergateway': {
      const port = await freePort();
      const command = [NODE, ...echoArgs].map((a) => JSON.stringify(a)).join(' ');
      const child = start(NODE, [SUPERGATEWAY, '--stdio', command, '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none']);
      await waitForPort(port, child, 'supergateway');
      return { name, url: `http://127.0.0.1:${port}/mcp`, wsUrl: undefined, roots: [child.pid as number], gatewayPid: child.pid, stop: () => stopTree(child) };
    }
    case 'mcp-proxy': {
      const port = await freePort();
      const child = start(NODE, [MCP_PROXY, '--host', '127.0.0.1', '--port', String(port), '--server', 'stream', '--', NODE, ...echoArgs]);
      await waitForPort(port, child, 'mcp-proxy');
      return { name, url: `http://127.0.0.1:${port}/mcp`, wsUrl: undefined, roots: [child.pid as number], gatewayPid: child.pid, stop: () => stopTree(child) };
    }
  }
}

/**
 * The auth config and request headers of the two authenticated systems. The JWT's key is static
 * (no JWKS fetch: the steady state of a cached key) and its audience the public URL set here, so
 * the token does not depend on the port picked at start.
 */
async function benchAuth(name: 'switchboard-apikey' | 'switchboard-jwt'): Promise<{ auth: Record<string, unknown>; headers: Record<string, string> }> {
  if (name === 'switchboard-apikey') {
    const key = 'bench-key-0123456789abcdef';
    return { auth: { apiKeys: [{ name: 'bench', key }] }, headers: { authorization: `Bearer ${key}` } };
  }
  const { SignJWT, exportJWK, generateKeyPair } = await import('jose');
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const issuer = 'https://issuer.bench.invalid';
  const publicUrl = 'http://gateway.bench.invalid';
  const token = await new SignJWT({ sub: 'bench', scope: 'mcp' })
    .setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(`${publicUrl}/servers/echo/mcp`)
    .setExpirationTime('2h')
    .sign(privateKey);
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256' };
  return { auth: { publicUrl, jwt: { issuers: [issuer], keys: [jwk], algorithms: ['ES256'] } }, headers: { authorization: `Bearer ${token}` } };
}
