/**
 * The cluster's Redis with AUTH, ACL users and TLS (issue 30 item 1): a real redis-server started
 * with `--requirepass`, an ACL user and only a TLS port (certificates made here with openssl),
 * reached by `openRedis` with `rediss://`, the CA file and the credentials, and by two real
 * replicas whose config takes the password from the environment; a wrong password or no CA is
 * not connected; the password is in no log.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type ClusterRedis } from '../../src/cluster/redis.ts';
import { clusterSchema } from '../../src/config/cluster-schema.ts';
import { startCluster, type Replica, type TestCluster } from '../support/cluster.ts';
import { post } from '../support/recorder.ts';

const PASSWORD = 'redis-password-0123456789-do-not-log';
const ACL_PASSWORD = 'acl-password-0123456789-do-not-log';
const dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-tls-'));
const file = (name: string) => join(dir, name);

/** A CA and a server certificate for 127.0.0.1, by the openssl command line. */
function makeCertificates(): { cert: string; key: string; ca: string } {
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=switchboard-test-ca');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.crt'), '-days', '2', '-extfile', file('ext.cnf'));
  return { cert: file('server.crt'), key: file('server.key'), ca: file('ca.crt') };
}

let cluster: TestCluster;
const conns: ClusterRedis[] = [];

beforeAll(async () => {
  const tls = makeCertificates();
  process.env['SWITCHBOARD_TEST_REDIS_PASSWORD'] = ACL_PASSWORD;
  cluster = await startCluster({
    replicas: 2,
    redis: { password: PASSWORD, users: [['gateway', ACL_PASSWORD]], tls },
    redisConfig: { username: 'gateway', password: '${SWITCHBOARD_TEST_REDIS_PASSWORD}', caFile: tls.ca },
  });
}, 120_000);
afterAll(async () => {
  for (const conn of conns) await conn.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function open(extra: Record<string, unknown>): ClusterRedis {
  const conn = openRedis({ url: cluster.redis.url, failMode: 'local', keyPrefix: 't:', commandTimeoutMs: 1_000, ...extra });
  conns.push(conn);
  return conn;
}

describe('Redis with AUTH and TLS', () => {
  it('is reached over rediss:// with the CA and the password or an ACL user, and not without them', async () => {
    expect(cluster.redis.url.startsWith('rediss://')).toBe(true);
    const classic = open({ password: PASSWORD, caFile: file('ca.crt') });
    await classic.ready(10_000);
    await classic.client.set('t:x', '1');
    const acl = open({ username: 'gateway', password: ACL_PASSWORD, caFile: file('ca.crt') });
    await acl.ready(10_000);
    expect(await acl.client.get('t:x')).toBe('1');
    // A wrong password, no password, and a server certificate nobody vouched for: never ready.
    for (const extra of [{ password: 'wrong', caFile: file('ca.crt') }, { caFile: file('ca.crt') }, { password: PASSWORD }]) {
      const refused = open(extra);
      await expect(refused.ready(1_500)).rejects.toThrow();
    }
  });

  it('replicas configured with a password from the environment relay through the directory', async () => {
    const [r0, r1] = cluster.replicas as [Replica, Replica];
    const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const opened = await post(r0.mcpUrl(), init);
    const session = opened.headers.get('mcp-session-id') as string;
    await post(r0.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'mcp-session-id': session });
    // r1 finds r0 in the directory (over TLS, as the ACL user) and relays.
    const answer = await post(r1.mcpUrl(), JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }), { 'mcp-session-id': session });
    expect(answer.status).toBe(200);
    for (const replica of [r0, r1]) {
      expect(replica.log()).toContain('cluster Redis connected');
      expect(replica.log()).not.toContain(ACL_PASSWORD);
      expect(replica.log()).not.toContain(PASSWORD);
    }
  });

  it('refuses credentials in the URL and a CA file without TLS', () => {
    const base = { advertiseUrl: 'http://10.0.0.5:8080', keys: ['k'.repeat(32)] };
    expect(clusterSchema.safeParse({ ...base, redis: { url: 'redis://:secret@redis:6379' } }).success).toBe(false);
    expect(clusterSchema.safeParse({ ...base, redis: { url: 'redis://user:secret@redis:6379' } }).success).toBe(false);
    expect(clusterSchema.safeParse({ ...base, redis: { url: 'redis://redis:6379', caFile: '/ca.pem' } }).success).toBe(false);
    expect(clusterSchema.safeParse({ ...base, redis: { url: 'rediss://redis:6379', username: 'gw', password: 'p', caFile: '/ca.pem' } }).success).toBe(true);
  });
});
