/**
 * deploy/cluster/compose.yaml is never run here (no Docker engine), so this test checks that it,
 * its HAProxy config and its gateway config agree: Debian's HAProxy accepts haproxy.cfg (`-c`);
 * its backend has one server per replica service, at the port each replica's config listens on,
 * checked on /readyz (a route a real gateway answers) with round robin and no stickiness; each
 * replica's config loads with the project's loader in the environment compose gives it, and names
 * the replica and its address as the other replicas reach it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway } from '../../src/main.ts';
import { root } from '../support/cli.ts';
import { buildConfig, createTestLogger } from '../support/gateway.ts';
import { HAPROXY, parseHaproxyConfig } from '../support/haproxy.ts';
import { recorderServer } from '../support/recorder.ts';

const dir = join(root, 'deploy', 'cluster');
interface Service {
  build?: { context: string; dockerfile: string };
  image: string;
  command?: string[];
  volumes?: Array<{ source: string; target: string; read_only?: boolean }>;
  environment?: Record<string, string>;
  ports?: string[];
  stop_grace_period?: string;
}
// `merge`: the replicas share their settings through YAML merge keys (<<), which compose reads.
const compose = parseYaml(readFileSync(join(dir, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const haproxyFile = join(dir, 'haproxy.cfg');
const sections = parseHaproxyConfig(readFileSync(haproxyFile, 'utf8'));
const section = (kind: string) => sections.filter((s) => s.kind === kind);
/** The gateway replicas: the services built from the repository's Dockerfile. */
const replicas = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const backend = () => {
  const frontend = section('frontend');
  expect(frontend).toHaveLength(1);
  const name = frontend[0]?.lines.find((l) => l.startsWith('default_backend '))?.split(' ')[1];
  const found = section('backend').find((b) => b.name === name);
  expect(found, `backend ${name}`).toBeDefined();
  return found?.lines ?? [];
};

/** Replica `name`'s config, loaded in the environment compose gives it (secrets as an operator makes them). */
function loadReplicaConfig(name: string) {
  const service = compose.services[name];
  const args = service?.command ?? [];
  const target = args[args.indexOf('--config') + 1];
  const volume = service?.volumes?.find((v) => v.target === target);
  expect(volume?.read_only, `${name}: ${target} mounted read-only`).toBe(true);
  const supplied: Record<string, string> = {
    SWITCHBOARD_API_KEY: randomBytes(24).toString('hex'),
    SWITCHBOARD_CLUSTER_KEY: randomBytes(32).toString('base64'),
    SWITCHBOARD_REDIS_PASSWORD: randomBytes(24).toString('hex'),
  };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(service?.environment ?? {})) {
    // `${VAR:?message}` must come from the operator's shell; `${VAR:-default}` has its default.
    const required = /^\$\{(\w+):\?/.exec(value);
    const fallback = /^\$\{\w+:-([^}]*)\}$/.exec(value);
    if (required) {
      expect(supplied[key], `${name}: ${key} is required by compose, the test needs a value for it`).toBeDefined();
      env[key] = supplied[key] ?? '';
    } else env[key] = fallback ? (fallback[1] ?? '') : value;
  }
  return loadConfigFile(resolve(dir, volume?.source ?? ''), { env });
}

describe('deploy/cluster: compose, HAProxy and the replicas agree', () => {
  it("Debian's HAProxy accepts haproxy.cfg", async () => {
    const { stderr } = await promisify(execFile)(HAPROXY, ['-c', '-f', haproxyFile], { timeout: 20_000 });
    // The replicas' names resolve only on compose's network: that warning, and no other.
    const warnings = stderr.split('\n').filter((l) => l.includes('[WARNING]') && !/could not resolve address 'gw\d'/.test(l));
    expect(warnings).toEqual([]);
  });

  it('three replicas, each with its own id, reachable by the others at its advertiseUrl', async () => {
    expect(replicas.map(([name]) => name)).toEqual(['gw1', 'gw2', 'gw3']);
    for (const [name] of replicas) {
      const config = await loadReplicaConfig(name);
      // Needs gateway.cluster in the schema (issue 24 item 1).
      const cluster = (config as { cluster?: { replicaId?: string; advertiseUrl?: string; redis?: { url: string } } }).cluster;
      expect(cluster?.replicaId).toBe(name);
      expect(cluster?.advertiseUrl).toBe(`http://${name}:${config.listen.port}`);
      expect(Object.keys(compose.services)).toContain(new URL(cluster?.redis?.url ?? 'redis://missing').hostname);
      expect(config.auth, 'bound beyond loopback: client authentication on').toBeDefined();
    }
  });

  it("HAProxy's servers are the replicas, at their configs' port, in round robin, with affinity learnt from Mcp-Session-Id only", async () => {
    const lines = backend();
    expect(lines).toContain('balance roundrobin');
    // No cookie or hash stickiness: only a 2025 session's own header, learnt from its answer
    // (an optimisation that saves the hop; any replica still serves any session).
    expect(lines.filter((l) => /^(cookie|stick|stick-table|hash-type)\b/.test(l))).toEqual([
      'stick-table type string len 200 size 100k expire 30m',
      'stick store-response res.hdr(mcp-session-id)',
      'stick on req.hdr(mcp-session-id)',
    ]);
    const servers = lines.filter((l) => l.startsWith('server ')).map((l) => l.split(' '));
    expect(servers.map((s) => s[1])).toEqual(replicas.map(([name]) => name));
    for (const [, server, address = '', ...options] of servers) {
      const config = await loadReplicaConfig(server ?? '');
      expect(address).toBe(`${server}:${config.listen.port}`);
      expect(options, `server ${server} is health-checked`).toContain('check');
    }
  });

  it("HAProxy checks /readyz for 200, a route a real gateway answers, and publishes the frontend's port", async () => {
    const lines = backend();
    expect(lines).toContain('option httpchk GET /readyz');
    expect(lines).toContain('http-check expect status 200');
    const gateway = await startGateway(buildConfig({ targets: { fx: recorderServer() } }), { logger: createTestLogger('silent', undefined) });
    try {
      expect((await fetch(new URL('/readyz', gateway.url))).status).toBe(200);
    } finally {
      await gateway.close();
    }
    const bind = section('frontend')[0]?.lines.find((l) => l.startsWith('bind '));
    const port = bind?.split(':').at(-1);
    expect(compose.services.haproxy?.ports?.map((p) => p.split(':').at(-1))).toEqual([port]);
    const mounted = compose.services.haproxy?.volumes?.find((v) => v.target.endsWith('/haproxy.cfg'));
    expect(resolve(dir, mounted?.source ?? '')).toBe(haproxyFile);
  });

  it('SSE streams may stay quiet for an hour: client, server and tunnel timeouts of an hour or more', () => {
    const defaults = section('defaults')[0]?.lines ?? [];
    const seconds = (name: string) => {
      const value = defaults.find((l) => l.startsWith(`timeout ${name} `))?.split(' ')[2] ?? '0';
      const [, n = '0', unit = 'ms'] = /^(\d+)(ms|s|m|h|d)?$/.exec(value) ?? [];
      return Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 }[unit as 'ms'];
    };
    for (const name of ['client', 'server', 'tunnel']) expect(seconds(name), `timeout ${name}`).toBeGreaterThanOrEqual(3600);
  });

  it("each replica's stop_grace_period outlasts its drain (shutdownGraceMs)", async () => {
    for (const [name, service] of replicas) {
      const config = await loadReplicaConfig(name);
      const grace = /^(\d+)s$/.exec(service.stop_grace_period ?? '')?.[1];
      expect(Number(grace) * 1000, name).toBeGreaterThan(config.shutdownGraceMs);
    }
  });
});
