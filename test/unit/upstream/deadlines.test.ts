/**
 * The one timer over a correlator's deadlines (src/upstream/deadlines.ts): order, moved and settled
 * deadlines, what a due handler may do, its bound on stale slots, and that its timer never keeps
 * the process alive. The behaviour through the gateway is in test/integration/timeout-deadlines.test.ts.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createDeadlines, type Timed } from '../../../src/upstream/deadlines.ts';

interface Item extends Timed {
  name: string;
}

function setup(onDue?: (item: Item, fired: string[]) => void) {
  const live = new Set<Item>();
  const fired: string[] = [];
  const firedAt = new Map<string, number>();
  const deadlines = createDeadlines<Item>(
    (item) => {
      live.delete(item);
      fired.push(item.name);
      firedAt.set(item.name, performance.now());
      onDue?.(item, fired);
    },
    () => live.size,
  );
  const add = (name: string, delayMs: number): Item => {
    const item: Item = { name, deadline: NaN };
    live.add(item);
    deadlines.add(item, delayMs);
    return item;
  };
  const settle = (item: Item) => {
    live.delete(item);
    deadlines.settled(item);
  };
  return { deadlines, add, settle, fired, firedAt, live };
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

describe('deadlines under one timer', () => {
  it('fires in deadline order whatever the order of arrival, never before the deadline', async () => {
    const { add, fired, firedAt } = setup();
    const started = performance.now();
    add('c', 90);
    add('a', 30);
    add('d', 120);
    add('b', 60);
    await until(() => fired.length === 4);
    expect(fired).toEqual(['a', 'b', 'c', 'd']);
    expect(firedAt.get('a')! - started).toBeGreaterThanOrEqual(29);
    expect(firedAt.get('d')! - started).toBeGreaterThanOrEqual(119);
  });

  it('a settled entry never fires, and a moved deadline fires only at its new time', async () => {
    const { add, settle, deadlines, fired, firedAt } = setup();
    const started = performance.now();
    const gone = add('gone', 20);
    const moved = add('moved', 20);
    add('last', 60);
    settle(gone);
    deadlines.add(moved, 100);
    await until(() => fired.length === 2);
    expect(fired).toEqual(['last', 'moved']);
    expect(firedAt.get('moved')! - started).toBeGreaterThanOrEqual(99);
  });

  it('a due handler may add and settle others: each fires once, in order', async () => {
    const { add, settle, fired } = setup((item) => {
      if (item.name === 'first') {
        settle(second);
        add('extra', 10);
      }
    });
    add('first', 10);
    const second = add('second', 10);
    add('third', 40);
    await until(() => fired.length === 3);
    expect(fired).toEqual(['first', 'extra', 'third']);
  });

  it('keeps the stale slots of settled requests bounded while the first one stays pending', () => {
    const { add, settle, deadlines } = setup();
    add('stuck', 60_000);
    for (let i = 0; i < 10_000; i++) settle(add(`n${i}`, 60_000));
    expect(deadlines.slots).toBeLessThan(40);
    deadlines.clear();
    expect(deadlines.slots).toBe(0);
  });

  it('holds nothing once nothing is pending, and its timer does not keep the process alive', async () => {
    const { add, settle, deadlines } = setup();
    settle(add('one', 60_000));
    expect(deadlines.slots).toBe(0);
    const module = fileURLToPath(new URL('../../../src/upstream/deadlines.ts', import.meta.url));
    const script = `import { createDeadlines } from ${JSON.stringify(module)};
      const d = createDeadlines(() => {}, () => 1);
      d.add({ deadline: NaN }, 60000);
      console.log('armed');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.on('exit', (c) => (clearTimeout(guard), resolve(c)));
    });
    expect(out.trim()).toBe('armed');
    expect(code).toBe(0);
  });
});
