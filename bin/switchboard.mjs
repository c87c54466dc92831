#!/usr/bin/env node
// The `switchboard` command. Runs dist/cli.js on Node >= 22; on an older `node` (the gateway needs
// 22), on the Node 24 the project pins as a dev dependency, so `npm install -g .` works anywhere.
// Plain JavaScript that any Node runs: no type stripping, no newer syntax.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major >= 22) {
  await import(cli);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(`switchboard: needs Node >= 22 (this is ${process.version}); run npm install in the clone, or use a newer node\n`);
    process.exit(2);
  }
  const child = spawn(pinned, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  // This process stands between the caller and the gateway: pass every stop signal on.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15)));
}
