import { describe, expect, it } from 'vitest';
import { createAgentPool } from '../../../src/transport/http-pool.ts';
import { remoteTarget } from '../../support/gateway.ts';

const target = (name: string) => remoteTarget(name, { type: 'http', url: `http://127.0.0.1:9/${name}` });

describe('agent pool', () => {
  it('one agent per target object, shared by its users', () => {
    const pool = createAgentPool();
    const a = target('a');
    expect(pool.acquire(a)).toBe(pool.acquire(a));
    expect(pool.acquire(target('a'))).not.toBe(pool.acquire(a));
    expect(pool.size).toBe(2);
  });

  it('a target the config no longer has keeps its agent while used, and loses it with its last user', () => {
    const pool = createAgentPool();
    const [gone, kept] = [target('gone'), target('kept')];
    const agent = pool.acquire(gone);
    pool.acquire(gone);
    pool.acquire(kept);
    pool.retain([kept]);
    pool.release(gone);
    expect(pool.size).toBe(2);
    expect(agent.destroyed).toBe(false);
    pool.release(gone);
    expect(pool.size).toBe(1);
    expect(agent.destroyed).toBe(true);
    // A kept target's agent stays when unused: the next session reuses its warm sockets.
    pool.release(kept);
    expect(pool.size).toBe(1);
  });

  it('an unused agent of a removed target goes at the reload itself', () => {
    const pool = createAgentPool();
    const gone = target('gone');
    const agent = pool.acquire(gone);
    pool.release(gone);
    pool.retain([]);
    expect(pool.size).toBe(0);
    expect(agent.destroyed).toBe(true);
  });

  it('close destroys every agent ever made, used or not, whichever config made it', async () => {
    const pool = createAgentPool();
    const agents = [pool.acquire(target('a'))];
    pool.retain([]);
    agents.push(pool.acquire(target('added-by-a-reload')));
    await pool.close();
    expect(pool.size).toBe(0);
    expect(agents.map((a) => a.destroyed)).toEqual([true, true]);
  });

  it('remembers per target that its endpoint has no GET stream', () => {
    const pool = createAgentPool();
    const a = target('a');
    expect(pool.offersGetStream(a)).toBe(true);
    pool.noteNoGetStream(a);
    expect(pool.offersGetStream(a)).toBe(false);
    expect(pool.offersGetStream(target('a'))).toBe(true);
  });
});
