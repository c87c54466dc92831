/**
 * The gateway under fuzzing, as its own process (`src/cli.ts --config`), so that a crash is an
 * exit the fuzzer sees, not a test worker dying. Serves `rec` (the recorder fixture) and `fuzzy`
 * (the stdio fixture whose output the fuzzer writes), on loopback. Its log (level warn) is read
 * as it comes for lines that mean an unplanned failure.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, root } from '../cli.ts';
import { freePort } from '../ports.ts';

export interface FuzzGatewayOptions {
  maxBodyBytes: number;
  /** The fuzzy target's request deadline: cases whose answer never comes end this fast. */
  upstreamTimeoutMs: number;
  /** The fuzzy target's longest line. */
  upstreamMaxMessageBytes: number;
}

export interface FuzzGateway {
  base: URL;
  pid: number;
  /** VmRSS of the gateway in MiB (0 once gone). */
  rssMiB(): number;
  /** The exit, once it happened. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Log lines of unplanned failures (uncaught errors, unhandled route errors, fatal). */
  logProblems: string[];
  stop(): Promise<void>;
}


const UNPLANNED = /"level":60|uncaught error|unhandled error in a route/;

export async function startFuzzGateway(options: FuzzGatewayOptions): Promise<FuzzGateway> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-fuzz-'));
  const file = join(dir, 'config.json');
  const fixture = (name: string) => join(root, 'test', 'fixtures', name);
  writeFileSync(
    file,
    JSON.stringify({
      gateway: {
        host: '127.0.0.1',
        port,
        logging: { level: 'warn' },
        limits: { maxBodyBytes: options.maxBodyBytes, maxSessions: 200 },
        session: { maxChildren: 32, initDeadlineMs: 5_000 },
      },
      mcpServers: {
        rec: { command: process.execPath, args: [fixture('recorder-server.mjs')] },
        fuzzy: {
          command: process.execPath,
          args: [fixture('fuzzy-server.mjs')],
          timeoutMs: options.upstreamTimeoutMs,
          maxMessageBytes: options.upstreamMaxMessageBytes,
          // Answers that never come are what many cases send on purpose. A per-session child's
          // timeouts never open the circuit; 0 also keeps the harness's sessions from having
          // their own child ended for them (connection-health.ts).
          circuitBreaker: { timeouts: 0 },
        },
      },
    }),
  );
  const child = spawn(process.execPath, [cli, '--config', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const logProblems: string[] = [];
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (UNPLANNED.test(line) && logProblems.length < 50) logProblems.push(line.slice(0, 2_000));
    }
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8_000)));
  const base = new URL(`http://127.0.0.1:${port}/`);
  for (let tries = 0; ; tries++) {
    if (exit) throw new Error(`gateway exited at start (${exit.code ?? exit.signal}): ${stderr}`);
    if (await fetch(new URL('/healthz', base)).then((r) => r.ok, () => false)) break;
    if (tries > 300) throw new Error(`gateway did not answer /healthz within 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: child.pid as number,
    rssMiB() {
      try {
        return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    },
    exit: () => exit,
    logProblems,
    async stop() {
      if (!exit) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
