import { defineConfig } from 'vitest/config';

/**
 * Files that load the whole machine on their own: the official conformance harness runs several
 * CLI processes at once against a gateway and its children, and the back-pressure test pushes
 * 300 MiB through one gateway while it reads that gateway's memory. Beside each other, or beside
 * other files on a 2-core machine, they starve each other's clocks (a scenario's harness deadline,
 * a start-up line) and fail for want of CPU, not for a fault. They run after everything else, one
 * file at a time: the whole suite stays near 4-5 minutes on 2 cores.
 */
const HEAVY = [
  'test/integration/conformance.test.ts',
  'test/integration/conformance-2026.test.ts',
  'test/integration/stdin-backpressure.test.ts',
];
// Interop checks need system packages (Debian's python3-websockets): `npm run test:interop`.
const NOT_HERE = ['test/interop/**', '**/node_modules/**'];

export default defineConfig({
  test: {
    // Integration tests spawn real children and open real sockets: give them room, and keep the
    // machine's two cores from being oversubscribed.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    // Every test file: processes it leaves behind are killed and reported (test/support/leftovers.ts).
    setupFiles: ['test/support/leftovers.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [...HEAVY, ...NOT_HERE], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'heavy', include: HEAVY, exclude: NOT_HERE, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
