/**
 * Issue 24 acceptance, the failing half: Debian's HAProxy in round robin in front of three gateway
 * replicas sharing a real Redis, MCP SDK v1 clients pointed at HAProxy. `kill -9` of a replica:
 * its sessions get 404 within 2 s through HAProxy, their clients initialize again and go on, the
 * other sessions see no error. SIGTERM of a replica with 20 calls in flight on its sessions: all
 * 20 answered while it drains, `/readyz` 503 takes it out of HAProxy and new sessions start on the
 * others. A rolling restart of all three under light load: no call that was accepted fails
 * (a call answered 404 found no session: the client initializes again, as an SDK user does).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLbCluster, type LbCluster, type LbReplica } from '../support/lb-cluster.ts';
import { textOf } from '../support/recorder.ts';

let c: LbCluster;

beforeAll(async () => {
  c = await startLbCluster({ replicas: 3, retryOnEmptyResponse: true });
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

/** An SDK client through HAProxy; with `owner`, its initialize goes straight to that replica (its session lives there). */
async function connect(owner?: LbReplica): Promise<{ client: Client; sessionId: string }> {
  const route: typeof fetch = (input, init) => {
    const initialize = typeof init?.body === 'string' && init.body.includes('"method":"initialize"');
    if (owner === undefined || !initialize) return fetch(input, init);
    const url = new URL(String(input instanceof Request ? input.url : input));
    return fetch(new URL(url.pathname + url.search, owner.url), init);
  };
  const transport = new StreamableHTTPClientTransport(c.url(), { fetch: route });
  const client = new Client({ name: 'cluster-haproxy-restarts', version: '1.0.0' });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId as string };
}

/** Connects through HAProxy, trying again while no replica takes a new session (503 draining, 404, refused). */
async function connectRetrying(deadlineMs = 30_000): Promise<{ client: Client; sessionId: string; tries: number }> {
  const deadline = Date.now() + deadlineMs;
  for (let tries = 1; ; tries++) {
    try {
      return { ...(await connect()), tries };
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const codeOf = (err: unknown) => (err as { code?: number }).code;
const echo = async (client: Client, text: string) => textOf(await client.callTool({ name: 'echo', arguments: { text } }));

describe('replicas failing behind HAProxy', () => {
  it('kill -9: its sessions get 404 within 2 s, their clients re-initialize and go on; the others see no error', async () => {
    const [victim, ...others] = c.replicas as [LbReplica, LbReplica, LbReplica];
    const doomed = await Promise.all([connect(victim), connect(victim)]);
    const spared = await Promise.all(others.flatMap((r) => [connect(r), connect(r)]));
    for (const [i, s] of [...doomed, ...spared].entries()) expect(await echo(s.client, `before ${i}`)).toBe(`before ${i}`);
    expect(doomed.map((s) => c.ownerOf(s.sessionId))).toEqual([victim.id, victim.id]);

    await victim.kill9();
    for (const [i, s] of doomed.entries()) {
      const started = Date.now();
      const failed = await s.client.callTool({ name: 'echo', arguments: { text: 'lost' } }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(codeOf(failed), `${String(failed)} ${String((failed as { cause?: unknown }).cause)}`).toBe(404);
      expect(Date.now() - started).toBeLessThan(2_000);
      await s.client.close();
      // What an application does on 404: a new session, through HAProxy, on a live replica.
      const again = await connectRetrying();
      expect(c.ownerOf(again.sessionId)).not.toBe(victim.id);
      expect(await echo(again.client, `again ${i}`)).toBe(`again ${i}`);
      await again.client.close();
    }
    // The other replicas' sessions: every call answered, through HAProxy, none of them an error.
    for (let round = 0; round < 3; round++) {
      for (const [i, s] of spared.entries()) expect(await echo(s.client, `after ${round}.${i}`)).toBe(`after ${round}.${i}`);
    }
    for (const s of spared) await s.client.close();

    await victim.start();
    await c.lb.waitFor({ [victim.id]: 'UP' });
  }, 120_000);

  it('SIGTERM with 20 calls in flight: all 20 answered; /readyz 503 takes it out, new sessions go elsewhere', async () => {
    const victim = c.replicas[1] as LbReplica;
    const clients = await Promise.all(Array.from({ length: 4 }, () => connect(victim)));
    let started = 0;
    let allStarted!: () => void;
    const inFlight = new Promise<void>((resolve) => (allStarted = resolve));
    const calls = Array.from({ length: 20 }, (_, i) => {
      let first = true;
      return (clients[i % 4] as { client: Client }).client.callTool({ name: 'slow', arguments: { ms: 3_000, steps: 3 } }, undefined, {
        timeout: 60_000,
        onprogress: () => {
          if (first && ++started === 20) allStarted();
          first = false;
        },
      });
    });
    await inFlight;

    const exited = victim.terminate();
    await expect.poll(async () => (await fetch(new URL('/readyz', victim.url))).status, { timeout: 10_000 }).toBe(503);
    await c.lb.waitFor({ [victim.id]: 'DOWN' }, 10_000);
    // New sessions through HAProxy start on the others while the victim still serves its calls.
    for (let i = 0; i < 4; i++) {
      const fresh = await connect();
      expect(c.ownerOf(fresh.sessionId)).not.toBe(victim.id);
      await fresh.client.close();
    }
    const results = await Promise.all(calls);
    expect(results.map(textOf)).toEqual(Array(20).fill('done'));
    await exited;
    for (const s of clients) await s.client.close();

    await victim.start();
    await c.lb.waitFor({ [victim.id]: 'UP' });
  }, 120_000);

  it('a rolling restart of all three under light load fails no accepted call', async () => {
    const tally = { answered: 0, reinitialized: 0, initTries: 0, failed: [] as string[] };
    let running = true;
    const worker = async (n: number) => {
      let session = await connectRetrying();
      for (let i = 0; running; i++) {
        const text = `w${n} ${i}`;
        try {
          const got = i % 5 === 4 ? textOf(await session.client.callTool({ name: 'slow', arguments: { ms: 300 } })) : await echo(session.client, text);
          if (got !== (i % 5 === 4 ? 'done' : text)) tally.failed.push(`${text}: answered ${got}`);
          else tally.answered++;
        } catch (err) {
          // 404: the session's owner is gone (no call was accepted); start a new session, as the SDK's user does.
          if (codeOf(err) !== 404) tally.failed.push(`${text}: ${String(err)}`);
          tally.reinitialized++;
          await session.client.close();
          session = await connectRetrying();
          tally.initTries += session.tries;
        }
      }
      await session.client.close();
    };
    const workers = Array.from({ length: 6 }, (_, n) => worker(n).catch((err: unknown) => void tally.failed.push(`worker ${n}: ${String(err)}`)));
    try {
      await expect.poll(() => tally.answered, { timeout: 30_000 }).toBeGreaterThan(30);
      for (const replica of c.replicas) {
        await replica.terminate();
        await replica.start();
        await c.lb.waitFor({ [replica.id]: 'UP' });
        const before = tally.answered;
        await expect.poll(() => tally.answered, { timeout: 30_000 }).toBeGreaterThan(before + 10);
      }
    } finally {
      running = false;
      await Promise.allSettled(workers);
    }
    expect(tally.failed).toEqual([]);
    // Each replica's sessions were lost once it restarted: the clients initialized again and went on.
    expect(tally.reinitialized).toBeGreaterThan(0);
    expect(tally.answered).toBeGreaterThan(60);
  }, 180_000);
});
