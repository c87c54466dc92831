import { defineConfig } from 'vitest/config';

// Interop checks against clients that need system packages (see test/interop/); run by .ci/run.
export default defineConfig({
  test: {
    include: ['test/interop/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
