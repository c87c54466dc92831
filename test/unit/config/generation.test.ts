import { describe, expect, it } from 'vitest';
import { canonicalConfig, configGeneration, generationKey } from '../../../src/config/generation.ts';
import type { ClusterConfig, GatewayConfig } from '../../../src/config/types.ts';
import { buildConfig } from '../../support/gateway.ts';

const SECRET = 'sk-live-very-secret-token-value';
const CLUSTER_KEY = 'cluster-key-0123456789abcdefghijklmnopq';

const cluster = (replicaId: string, advertiseUrl: string): ClusterConfig => ({
  replicaId,
  advertiseUrl,
  redis: { url: 'redis://:redis-password@redis:6379', failMode: 'local', keyPrefix: 'switchboard:', commandTimeoutMs: 500 },
  keys: [CLUSTER_KEY],
  heartbeatMs: 1_000,
  replicaTtlMs: 3_000,
  forwardConnectTimeoutMs: 1_000,
});

function config(env: Record<string, string> = { TOKEN: SECRET }, extra: Partial<GatewayConfig> = {}): GatewayConfig {
  return { ...buildConfig({ targets: { a: { command: 'node', args: ['a.js'], env }, b: { command: 'node', args: ['b.js'] } } }), ...extra };
}

describe('config generation', () => {
  it('is stable: the same config gives the same hash, whatever the order of its keys', () => {
    const one = config();
    const reordered = Object.fromEntries(Object.entries(one).reverse()) as unknown as GatewayConfig;
    expect(configGeneration(one, 'k')).toMatch(/^[0-9a-f]{16}$/);
    expect(configGeneration(reordered, 'k')).toBe(configGeneration(one, 'k'));
  });

  it('changes with any setting, a secret included, but not with where a replica listens or its cluster identity', () => {
    const base = config({ TOKEN: SECRET }, { cluster: cluster('r1', 'http://10.0.0.1:8080') });
    const other = config({ TOKEN: SECRET }, { cluster: cluster('r2', 'http://10.0.0.2:8080'), listen: { host: '0.0.0.0', port: 9999 } });
    expect(configGeneration(other, 'k')).toBe(configGeneration(base, 'k'));
    expect(configGeneration(config({ TOKEN: `${SECRET}2` }, { cluster: cluster('r1', 'http://10.0.0.1:8080') }), 'k')).not.toBe(configGeneration(base, 'k'));
    expect(configGeneration({ ...base, shutdownGraceMs: 1 }, 'k')).not.toBe(configGeneration(base, 'k'));
  });

  it("leaves out the replica's own address in allowedHosts, not the others", () => {
    const replica = (id: string, ip: string, extra: string[] = []) =>
      config(undefined, { cluster: cluster(id, `http://${ip}:8080`), allowedHosts: ['mcp.example.com', `${ip}:8080`, ...extra] });
    expect(configGeneration(replica('r2', '10.0.0.2'), 'k')).toBe(configGeneration(replica('r1', '10.0.0.1'), 'k'));
    expect(configGeneration(replica('r1', '10.0.0.1', ['evil.example']), 'k')).not.toBe(configGeneration(replica('r1', '10.0.0.1'), 'k'));
  });

  it("leaves out where a replica keeps its pins file, but not the pinning mode", () => {
    const pinning = (file: string, mode: 'warn' | 'block') => config(undefined, { pinning: { mode, file, maxItems: 10_000, maxPending: 256 } });
    expect(configGeneration(pinning('/srv/r2/switchboard-pins.json', 'warn'), 'k')).toBe(configGeneration(pinning('/srv/r1/switchboard-pins.json', 'warn'), 'k'));
    expect(configGeneration(pinning('/srv/r1/switchboard-pins.json', 'block'), 'k')).not.toBe(configGeneration(pinning('/srv/r1/switchboard-pins.json', 'warn'), 'k'));
  });

  it('never shows a secret: env values, the cluster key and the Redis password are HMACs', () => {
    const text = canonicalConfig(config({ TOKEN: SECRET }, { cluster: cluster('r1', 'http://10.0.0.1:8080') }), 'k');
    for (const secret of [SECRET, CLUSTER_KEY, 'redis-password']) expect(text).not.toContain(secret);
    expect(text).toContain('"TOKEN":"hmac:');
    expect(text).toContain('a.js');
  });

  it('hides secrets under a key from the cluster key (the same on every replica), else a random one', () => {
    const clustered = config({}, { cluster: cluster('r1', 'http://10.0.0.1:8080') });
    expect(generationKey(clustered, () => 'random')).toBe(generationKey(clustered, () => 'other'));
    expect(generationKey(clustered, () => 'random')).not.toContain(CLUSTER_KEY);
    expect(generationKey(config(), () => 'random')).toBe('random');
  });
});
