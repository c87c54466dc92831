import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Interop checks need system packages (Debian's python3-websockets): `npm run test:interop`.
    exclude: ['test/interop/**', '**/node_modules/**'],
    // Integration tests spawn real children and open real sockets: give them room, and keep the
    // machine's two cores from being oversubscribed.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
