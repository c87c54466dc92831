/** When a member's first call may go (src/upstream/roots-settle.ts): decided by its answers to pings, not by a clock. */
import { describe, expect, it } from 'vitest';
import { createRootsSettle } from '../../../src/upstream/roots-settle.ts';

const rootsList = { jsonrpc: '2.0' as const, id: 'r1', method: 'roots/list' };
const withRoots = { capabilities: { roots: { listChanged: true } } };

/** A probe that counts its pings and answers each when told to (or at once). */
function pinger(onPing: (n: number) => void = () => {}) {
  let pings = 0;
  return {
    probe: () => {
      pings++;
      onPing(pings);
      return Promise.resolve({});
    },
    get pings() {
      return pings;
    },
  };
}

describe('roots settle', () => {
  it('a client without the roots capability: no ping, no wait', async () => {
    const p = pinger();
    await createRootsSettle({ capabilities: {} }).settled(p.probe);
    expect(p.pings).toBe(0);
  });

  it('a member that does not ask before answering the ping: one ping, then the call goes', async () => {
    const p = pinger();
    await createRootsSettle(withRoots).settled(p.probe);
    expect(p.pings).toBe(1);
  });

  it('a member that asks before the ping is answered: waits for the client\'s answer, then more pings', async () => {
    const settle = createRootsSettle(withRoots);
    const p = pinger((n) => {
      if (n === 1) settle.asked(rootsList);
    });
    let over = false;
    const done = settle.settled(p.probe).then(() => (over = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(false);
    expect(p.pings).toBe(1);
    settle.answered();
    await done;
    expect(p.pings).toBe(6);
  });

  it('asked and answered before anyone waited: still the pings after the answer', async () => {
    const settle = createRootsSettle(withRoots);
    settle.asked(rootsList);
    settle.answered();
    const p = pinger();
    await settle.settled(p.probe);
    expect(p.pings).toBe(6);
  });

  it('other requests from the member are not a roots exchange', async () => {
    const settle = createRootsSettle(withRoots);
    settle.asked({ jsonrpc: '2.0', id: 's1', method: 'sampling/createMessage' });
    const p = pinger();
    await settle.settled(p.probe);
    expect(p.pings).toBe(1);
  });
});
