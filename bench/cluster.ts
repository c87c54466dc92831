/**
 * The cluster benchmark (issue 24): calls/s through Debian's HAProxy (round robin, no stickiness)
 * in front of 1, 2 and 3 gateway replicas sharing a real Redis, and the cost of a forwarded
 * request (session on r0, calls sent to r1, which relays them) against the same calls sent to
 * the owner. The upstream is bench/echo-server.mjs over stdio; the load is lib/load.ts (S
 * sessions x C calls in flight, every answer checked). Prints a Markdown table; writes nothing.
 *
 *   node bench/cluster.ts [--duration 5000] [--warmup 1000] [--sessions 8] [--in-flight 4] [--replicas 1,2,3]
 *
 * Needs `redis-server` and `haproxy` (apt-get install redis-server haproxy). Every process it
 * starts is killed on the way out, pass or fail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { httpConnector, type Connector } from './lib/clients.ts';
import { killClusterProcesses, relayedConnector, startCluster } from './lib/cluster.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { ROOT } from './lib/spawn.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '1000' },
    sessions: { type: 'string', default: '8' },
    'in-flight': { type: 'string', default: '4' },
    replicas: { type: 'string', default: '1,2,3' },
    // `relay`: only the relayed and the owner's rows (a profile of the hop alone); `haproxy`: only HAProxy's.
    only: { type: 'string', default: '' },
    // HAProxy learns each session's replica from the answer's Mcp-Session-Id (deploy/cluster/haproxy.cfg does).
    sticky: { type: 'boolean', default: false },
  },
});
const LOAD = { sessions: Number(values.sessions), inFlight: Number(values['in-flight']), bytes: 0, warmupMs: Number(values.warmup), durationMs: Number(values.duration), gatewayPid: undefined };
const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-cluster-'));

async function measure(connector: Connector, roots: number[]): Promise<LoadResult> {
  try {
    return await runLoad(connector, { ...LOAD, roots });
  } finally {
    await connector.close();
  }
}

const row = (name: string, r: LoadResult) =>
  `| ${name} | ${r.callsPerSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} | ${r.serverCpu.toFixed(0)} |`;

async function main(): Promise<void> {
  const rows: string[] = [];
  const path = '/servers/echo/mcp';
  const connections = LOAD.sessions * LOAD.inFlight;
  for (const n of values.replicas.split(',').map(Number)) {
    const cluster = await startCluster(n, { cli: join(ROOT, 'src/cli.ts'), dir, cpuProfDir: process.env.BENCH_CPU_PROF });
    const replicas = cluster.replicas;
    const pids = replicas.map((r) => r.pid);
    if (values.only !== 'relay') {
      const front = await cluster.startHaproxy(values.sticky);
      rows.push(row(`HAProxy, ${n} replica${n === 1 ? '' : 's'}`, await measure(httpConnector(`${front}${path}`, connections), pids)));
    }
    if (n >= 2 && values.only !== 'haproxy') {
      const [r0, r1] = replicas as unknown as [{ url: string }, { url: string }];
      rows.push(row('r1 relays to the owner r0 (no HAProxy)', await measure(relayedConnector(r0.url + path, r1.url + path, connections), pids)));
      rows.push(row('the owner r0 directly (no HAProxy)', await measure(httpConnector(r0.url + path, connections), pids)));
    }
    // A profile is written at a clean exit only: SIGTERM (a drain, idle by now), then the group's SIGKILL.
    await cluster.stop(process.env.BENCH_CPU_PROF === undefined ? 0 : 5_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  console.log(`${LOAD.sessions} sessions x ${LOAD.inFlight} calls in flight, ${LOAD.durationMs} ms after ${LOAD.warmupMs} ms warm-up, echo over stdio\n`);
  console.log('| Setup | calls/s | p50 ms | p99 ms | errors | CPU ms / 1,000 calls (replicas) |\n| --- | --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
}

// Stopped by a signal (Ctrl-C, or a `timeout`): Redis, HAProxy and the replicas go too.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    killClusterProcesses();
    process.exit(code);
  });
}
try {
  await main();
} finally {
  killClusterProcesses();
  rmSync(dir, { recursive: true, force: true });
}
