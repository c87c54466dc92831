/**
 * Setup file of every test file (vitest.config.ts): no process a test file started outlives it.
 *
 * Each file's worker puts a token in its environment, which every process it spawns inherits
 * (unless a test hands a child an environment of its own; those are still found as descendants
 * of the worker). After the file's own hooks have run (this file's `afterAll` is registered
 * first, so it runs last), anything still running that carries the token, or descends from the
 * worker or from a process that carries it, gets a few seconds to finish exiting, is then killed,
 * and the file fails naming what it left: a leak is a failure, and never a process left running.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll } from 'vitest';
import { descendantsOf, describeProcess, isAlive, killTree, processesWithEnv } from './processes.ts';

const TOKEN = `SWITCHBOARD_TEST_OWNER=${randomUUID()}`;
process.env['SWITCHBOARD_TEST_OWNER'] = TOKEN.slice(TOKEN.indexOf('=') + 1);

/** What a process that is already shutting down (SIGTERM sent, close() under way) may still take on a loaded machine. */
const GRACE_MS = 10_000;

function leftovers(): number[] {
  const self = process.pid;
  const found = new Set([...processesWithEnv(TOKEN), ...descendantsOf(self)]);
  found.delete(self);
  found.delete(process.ppid); // vitest itself, which shares the environment it gave the worker
  return [...found].filter(isAlive);
}

afterAll(async () => {
  const deadline = Date.now() + GRACE_MS;
  let left = leftovers();
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = leftovers();
  }
  if (left.length === 0) return;
  const described = left.map(describeProcess);
  for (const pid of left) killTree(pid);
  throw new Error(`this test file left ${left.length} process(es) running (now killed):\n${described.join('\n')}`);
}, GRACE_MS + 5_000);
