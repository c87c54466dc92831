/**
 * Aggregate members open their upstreams the way single-target sessions do: a target in shared
 * mode is a lease on its pooled child, and a remote target with `forwardAuthorization` gets the
 * downstream's own token (and others never do).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { startAggregateGateway, textOf } from '../support/aggregate.ts';
import { remoteTarget } from '../support/gateway.ts';
import { recorderServer, rpc } from '../support/recorder.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/http-upstream.ts';

let gw: RunningGateway;
let fixture: HttpFixture;

beforeAll(async () => {
  fixture = await startHttpFixture({ getStream: false });
  gw = await startAggregateGateway({
    targets: {
      pooled: { ...recorderServer(), upstream: { mode: 'shared', children: 1 } },
      forward: { target: remoteTarget('forward', { type: 'http', url: fixture.url, forwardAuthorization: true }) },
      keep: { target: remoteTarget('keep', { type: 'http', url: fixture.url }) },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await fixture?.close();
});

const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe('aggregate members and their upstreams', () => {
  it('a shared-mode target serves every aggregate session from its one child', async () => {
    const url = new URL('/mcp', gw.url);
    const sessions = await Promise.all([rpc.initialize(url), rpc.initialize(url), rpc.initialize(url)]);
    const pids = await Promise.all(sessions.map(async (s, i) => JSON.parse(textOf((await s.request(call(i + 1, 'pooled__whoami'))).json.result)).pid as number));
    expect(pids.every((pid) => typeof pid === 'number' && pid > 0)).toBe(true);
    expect(new Set(pids).size).toBe(1);
    await Promise.all(sessions.map((s) => s.delete()));
  });

  it('forwards the downstream Authorization only to the target that opts in', async () => {
    const session = await rpc.initialize(new URL('/mcp', gw.url), '2025-11-25', { authorization: 'Bearer downstream' });
    const forwarded = JSON.parse(textOf((await session.request(call(1, 'forward__headers'))).json.result)) as Record<string, string>;
    const kept = JSON.parse(textOf((await session.request(call(2, 'keep__headers'))).json.result)) as Record<string, string>;
    expect(forwarded.authorization).toBe('Bearer downstream');
    expect(kept.authorization).toBeUndefined();
    await session.delete();
  });
});
