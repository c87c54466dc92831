#!/usr/bin/env node
// `npm run bench` step 1: install the benchmark's own dependencies (the peers and undici, pinned
// in bench/package.json and bench/package-lock.json) when they are missing, so the product
// package never carries them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bench = fileURLToPath(new URL('.', import.meta.url));
const needed = ['supergateway', 'mcp-proxy', 'undici'];
if (needed.some((name) => !existsSync(`${bench}node_modules/${name}/package.json`))) {
  process.stderr.write('bench: installing bench/ dependencies (npm ci in bench/)\n');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: bench, stdio: 'inherit' });
}
