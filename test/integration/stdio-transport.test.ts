/**
 * The stdio transport against real child processes (test/fixtures/misbehaving-server.mjs and a few
 * inline scripts). Every test ends by proving the children it started are gone.
 */
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { StdioTargetConfig } from '../../src/config/types.ts';
import type { GatewayError } from '../../src/errors/gateway-error.ts';
import type { JsonRpcMessage } from '../../src/jsonrpc/types.ts';
import { createLogger } from '../../src/log/logger.ts';
import { DEFAULT_INHERITED_ENV } from '../../src/config/default-env.ts';
import { createStdioTransport, killAllChildrenNow, type StdioTransport } from '../../src/transport/stdio.ts';
import { isAlive, processGroupMembers, readStat, waitUntilGone } from '../support/processes.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/misbehaving-server.mjs', import.meta.url));
const ESCAPING = fileURLToPath(new URL('../fixtures/escaping-grandchild.mjs', import.meta.url));
const GRACE = 300;

function target(args: string[], overrides: Partial<StdioTargetConfig> = {}): StdioTargetConfig {
  return {
    type: 'stdio',
    name: 'fixture',
    command: process.execPath,
    args,
    env: {},
    principalEnv: {},
    inheritEnv: [...DEFAULT_INHERITED_ENV],
    cwd: undefined,
    timeouts: { requestMs: 10_000, resetOnProgress: true, maxTotalMs: 0 },
    restart: { onExit: 'end', maxRestarts: 0, initialBackoffMs: 10, maxBackoffMs: 10 },
    shutdownGraceMs: GRACE,
    maxMessageBytes: 1024 * 1024,
    stderrLinesPerSecond: 100,
    ...overrides,
  };
}

interface Harness {
  transport: StdioTransport;
  messages: JsonRpcMessage[];
  closes: (GatewayError | undefined)[];
  undeliverable: { id: number; error: GatewayError }[];
  logs: Record<string, unknown>[];
  /** Resolves with the next message matching `predicate` (already received ones count). */
  next(predicate: (m: JsonRpcMessage) => boolean): Promise<JsonRpcMessage>;
  closed: Promise<GatewayError | undefined>;
}

const started: StdioTransport[] = [];

function harness(config: StdioTargetConfig): Harness {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const transport = createStdioTransport({ target: config, logger: createLogger({ level: 'debug', destination }) });
  started.push(transport);
  const messages: JsonRpcMessage[] = [];
  const waiters: { predicate: (m: JsonRpcMessage) => boolean; resolve: (m: JsonRpcMessage) => void }[] = [];
  const closes: (GatewayError | undefined)[] = [];
  let resolveClosed!: (r: GatewayError | undefined) => void;
  const closed = new Promise<GatewayError | undefined>((resolve) => (resolveClosed = resolve));
  const undeliverable: Harness['undeliverable'] = [];
  transport.onmessage = (m) => {
    messages.push(m);
    for (const w of waiters.splice(0)) {
      if (w.predicate(m)) w.resolve(m);
      else waiters.push(w);
    }
  };
  transport.onclose = (reason) => {
    closes.push(reason);
    resolveClosed(reason);
  };
  transport.onundeliverable = (id, error) => undeliverable.push({ id, error });
  return {
    transport,
    messages,
    closes,
    undeliverable,
    logs,
    closed,
    next(predicate) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

const byId = (id: number) => (m: JsonRpcMessage) => 'id' in m && m.id === id && !('method' in m);
const initialize = (id: number): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
});
const call = (id: number, name: string, args: Record<string, unknown> = {}): JsonRpcMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const textOf = (m: JsonRpcMessage): unknown =>
  (m as { result?: { content?: { text?: unknown }[] } }).result?.content?.[0]?.text;

afterEach(async () => {
  // Whatever a test left running is stopped here, and must then be gone.
  const pids = started.map((t) => t.pid).filter((p): p is number => p !== undefined);
  await Promise.all(started.splice(0).map((t) => t.close()));
  expect(await waitUntilGone(pids, 2000)).toEqual([]);
});

describe('stdio transport: normal operation', () => {
  it('round-trips initialize, tools/list and echo; close() gives onclose() without reason and the child exits', async () => {
    const h = harness(target([FIXTURE, 'normal']));
    await h.transport.start();
    const pid = h.transport.pid as number;
    expect(isAlive(pid)).toBe(true);
    await h.transport.send(initialize(1));
    await h.transport.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await h.transport.send(call(3, 'echo', { text: 'grüße 😀 "quoted"\nline' }));
    const init = await h.next(byId(1));
    expect(init).toMatchObject({ result: { protocolVersion: '2025-06-18', serverInfo: { name: 'misbehaving' } } });
    expect((await h.next(byId(2))) as unknown).toMatchObject({ result: { tools: [{ name: 'echo' }, { name: 'slow' }, { name: 'crash' }, { name: 'huge' }] } });
    expect(textOf(await h.next(byId(3)))).toBe('grüße 😀 "quoted"\nline');

    await Promise.all([h.transport.close(), h.transport.close()]);
    expect(h.closes).toEqual([undefined]);
    expect(isAlive(pid)).toBe(false);
    await expect(h.transport.send(call(4, 'echo'))).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
  });

  it('delivers every line of a notification flood in order, then the answer', async () => {
    const h = harness(target([FIXTURE, 'flood-notifications', '--count=2000']));
    await h.transport.start();
    await h.transport.send(call(1, 'echo', { text: 'done' }));
    expect(textOf(await h.next(byId(1)))).toBe('done');
    const data = h.messages.slice(0, -1).map((m) => (m as { params?: { data?: unknown } }).params?.data);
    expect(data).toEqual(Array.from({ length: 2000 }, (_, i) => `flood ${i}`));
  });

  it('waits for drain when stdin is full: a slow reader gets every large message, in order', async () => {
    const h = harness(target([FIXTURE, 'slow-reader', '--read-delay-ms=2']));
    await h.transport.start();
    const count = 60;
    const payload = (i: number) => `${i}:` + String.fromCharCode(97 + (i % 26)).repeat(128 * 1024);
    let answeredWhenLastSendResolved = -1;
    for (let i = 1; i <= count; i++) await h.transport.send(call(i, 'echo', { text: payload(i) }));
    answeredWhenLastSendResolved = h.messages.length;
    // Without backpressure all 60 sends (7.5 MiB) would resolve at once, before any answer.
    expect(answeredWhenLastSendResolved).toBeGreaterThan(count / 2);
    await h.next(byId(count));
    expect(h.messages.map((m) => (m as { id?: unknown }).id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    h.messages.forEach((m, i) => expect(textOf(m)).toBe(payload(i + 1)));
  });
});

describe('stdio transport: spawn failures', () => {
  it('rejects start() with GW_UPSTREAM_SPAWN_FAILED (ENOENT) and never calls onclose', async () => {
    const h = harness(target([], { command: '/nonexistent/definitely-not-a-server' }));
    const err = (await h.transport.start().catch((e: unknown) => e)) as GatewayError;
    expect(err.code).toBe('GW_UPSTREAM_SPAWN_FAILED');
    expect(err.details).toMatchObject({ target: 'fixture', reason: 'ENOENT' });
    // The path (and any secret in the command line) stays in the log; the client gets the code.
    expect(err.message).toBe('Upstream server "fixture" could not be started (ENOENT)');
    expect(JSON.stringify(err.toJsonRpc())).not.toContain('definitely-not-a-server');
    expect(h.logs.some((l) => l.command === '/nonexistent/definitely-not-a-server' && l.correlationId === err.details.correlationId)).toBe(true);
    await expect(h.transport.send(call(1, 'echo'))).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
    await h.transport.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(h.closes).toEqual([]);
  });

  it('reports EACCES for a file that is not executable', async () => {
    const h = harness(target([], { command: FIXTURE })); // the .mjs file itself is mode 644
    await expect(h.transport.start()).rejects.toMatchObject({ code: 'GW_UPSTREAM_SPAWN_FAILED', details: { reason: 'EACCES' } });
    expect(h.closes).toEqual([]);
  });
});

describe('stdio transport: the child dies on its own', () => {
  it('crash mid-call: onclose once with GW_UPSTREAM_EXITED, exit code 3 and the stderr line', async () => {
    const h = harness(target([FIXTURE, 'crash-mid-call'], { stderrInErrors: true }));
    await h.transport.start();
    await h.transport.send(initialize(1));
    await h.next(byId(1));
    await h.transport.send(call(2, 'echo', { text: 'x' }));
    const reason = await h.closed;
    expect(reason?.code).toBe('GW_UPSTREAM_EXITED');
    expect(reason?.message).toBe('Upstream server "fixture" exited with code 3');
    expect(reason?.details).toMatchObject({ target: 'fixture', exitCode: 3, signal: null, stderr: ['about to crash'] });
    await h.transport.close();
    expect(h.closes).toHaveLength(1);
    await expect(h.transport.send(call(3, 'echo'))).rejects.toMatchObject({ code: 'GW_UPSTREAM_CLOSED' });
  });

  it('once the child has answered, its stderr tail stays out of the error data by default: the client gets a correlation id, the log the lines', async () => {
    const h = harness(target([FIXTURE, 'crash-mid-call']));
    await h.transport.start();
    await h.transport.send(initialize(1));
    await h.next(byId(1));
    await h.transport.send(call(2, 'echo', { text: 'x' }));
    const reason = await h.closed;
    expect(reason?.details).toEqual({ target: 'fixture', exitCode: 3, signal: null, correlationId: expect.any(String) });
    expect(JSON.stringify(reason?.toJsonRpc())).not.toContain('about to crash');
    expect(reason?.internal).toEqual({ stderr: ['about to crash'] });
    const logged = h.logs.find((l) => (l.err as { details?: { correlationId?: string } } | undefined)?.details?.correlationId === reason?.details.correlationId);
    expect(JSON.stringify(logged)).toContain('about to crash');
  });

  it('a child that exits before answering anything says why in the error data and message, without stderrInErrors (issue 31)', async () => {
    const h = harness(target([FIXTURE, 'exit-during-init']));
    await h.transport.start();
    await h.transport.send(initialize(1));
    const reason = await h.closed;
    expect(reason?.details).toEqual({ target: 'fixture', exitCode: 1, signal: null, stderr: ['init failed: bad config'], correlationId: expect.any(String) });
    expect(reason?.message).toBe('Upstream server "fixture" exited with code 1: init failed: bad config');
    const warned = h.logs.find((l) => l.level === 40 && String(l.msg).startsWith('upstream closed unexpectedly'));
    expect(warned).toMatchObject({ msg: 'upstream closed unexpectedly: init failed: bad config', stderr: ['init failed: bad config'] });
  });

  it('exit during initialize: exit code 1 and "init failed: bad config" in the error data', async () => {
    const h = harness(target([FIXTURE, 'exit-during-init'], { stderrInErrors: true }));
    await h.transport.start();
    await h.transport.send(initialize(1));
    const reason = await h.closed;
    expect(reason?.details).toMatchObject({ exitCode: 1, stderr: ['init failed: bad config'] });
    expect(h.transport.stderrTail()).toEqual(['init failed: bad config']);
  });

  it('delivers the last stdout and stderr lines written just before exiting, before onclose', async () => {
    // 2 MiB: the tail of it is still in the pipe when the exit is reported, so onclose must wait for
    // EOF. (The child exits in the write callback: process.exit() right after a write to a pipe
    // would truncate it.)
    const script = [
      `const line = JSON.stringify({jsonrpc:'2.0',id:1,result:{pad:'x'.repeat(2097152)}})+'\\n';`,
      `process.stdout.write(line, () => process.stderr.write('last words\\n', () => process.exit(5)));`,
    ].join(' ');
    const h = harness(target(['-e', script], { maxMessageBytes: 4 * 1024 * 1024, stderrInErrors: true }));
    const order: string[] = [];
    await h.transport.start();
    h.transport.onmessage = () => order.push('message');
    const onclose = h.transport.onclose;
    h.transport.onclose = (r) => {
      order.push(`close ${String(r?.details.exitCode)}`);
      onclose?.(r);
    };
    const reason = await h.closed;
    expect(order).toEqual(['message', 'close 5']);
    expect(reason?.details.stderr).toEqual(['last words']);
  });

  it('waits for pipes that outlive the leader: a line written after its exit still comes before onclose', async () => {
    const h = harness(target([ESCAPING, 'late'], { stderrInErrors: true }));
    await h.transport.start();
    const reason = await h.closed;
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 1, result: { late: true } }]);
    expect(reason?.details).toMatchObject({ exitCode: 5, stderr: [expect.stringMatching(/^grandchild-pid=\d+$/)] });
  });

  it('close() while onclose waits for the pipes of a crashed leader keeps the crash as the reason', async () => {
    const h = harness(target([ESCAPING, 'late']));
    await h.transport.start();
    // Reaped (gone from /proc, not just a zombie): Node reaps and emits 'exit' in one step.
    await waitFor(() => readStat(h.transport.pid as number) === undefined);
    expect(h.closes).toEqual([]); // onclose is still waiting for the grandchild's late line
    await h.transport.close();
    expect(h.closes).toHaveLength(1);
    expect(h.closes[0]?.code).toBe('GW_UPSTREAM_EXITED');
  });

  it('does not wait forever for pipes held by a process outside the group', async () => {
    const h = harness(target([ESCAPING, 'hold']));
    await h.transport.start();
    const escaped = await grandchildPid(h.transport);
    try {
      const t0 = Date.now();
      expect((await h.closed)?.details).toMatchObject({ exitCode: 5 });
      expect(Date.now() - t0).toBeLessThan(2000);
      await h.transport.close(); // resolves too, although the pipes are still open
    } finally {
      // The transport kills escaped descendants once it has closed; this is only a safety net.
      try {
        process.kill(escaped, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('kills the grandchildren when the leader crashes', async () => {
    const h = harness(target([FIXTURE, 'spawn-grandchild']));
    await h.transport.start();
    const grandchild = await grandchildPid(h.transport);
    await h.transport.send(call(1, 'crash', { code: 4 }));
    expect((await h.closed)?.details).toMatchObject({ exitCode: 4 });
    expect(await waitUntilGone([grandchild], 2000)).toEqual([]);
  });
});

describe('stdio transport: what the child writes', () => {
  it('skips non-JSON lines and invalid envelopes, logs them, and still delivers the valid answers', async () => {
    const h = harness(target([FIXTURE, 'garbage-stdout']));
    await h.transport.start();
    await h.transport.send(initialize(1));
    await h.transport.send(call(2, 'echo', { text: 'still here' }));
    expect(textOf(await h.next(byId(2)))).toBe('still here');
    // The garbage includes `{"jsonrpc":"2.0","id":1,"result":"not an object"}`: it must not pass as an answer.
    expect(h.messages.map((m) => (m as { id?: unknown }).id)).toEqual([1, 2]);
    expect(h.messages[0]).toMatchObject({ result: { serverInfo: { name: 'misbehaving' } } });
    const warnings = h.logs.filter((l) => l.msg === 'upstream wrote a line that is not a JSON-RPC message; skipped');
    expect(warnings.map((w) => w.problem)).toContain('not JSON');
    expect(warnings.map((w) => w.problem)).toContain('result must be an object');
    expect(isAlive(h.transport.pid as number)).toBe(true);
  });

  it('over-long response with a readable id: onundeliverable for that id, and the child stays usable', async () => {
    const h = harness(target([FIXTURE, 'huge-line'], { maxMessageBytes: 1024 * 1024 })); // 64 MiB line
    await h.transport.start();
    await h.transport.send(call(7, 'echo', { text: 'swallowed by huge-line mode' }));
    await h.transport.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect(await h.next(byId(8))).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
    expect(h.undeliverable.map((u) => u.id)).toEqual([7]);
    const error = h.undeliverable[0]?.error;
    expect(error?.code).toBe('GW_UPSTREAM_MESSAGE_TOO_LARGE');
    expect(error?.details).toEqual({ target: 'fixture', limit: 1024 * 1024 });
    expect(h.messages.some(byId(7))).toBe(false);
    expect(h.closes).toEqual([]);
  });

  it('over-long notification: dropped, nothing attributed, the child stays usable', async () => {
    const h = harness(target([FIXTURE, 'normal'], { maxMessageBytes: 64 * 1024 }));
    await h.transport.start();
    await h.transport.send(call(3, 'huge', { bytes: 1024 * 1024, shape: 'notification' }));
    expect(textOf(await h.next(byId(3)))).toBe('sent a huge notification');
    // The notification's data carries {"id":3}: a naive sniff would have failed request 3.
    expect(h.undeliverable).toEqual([]);
    expect(h.closes).toEqual([]);
  });

  it('over-long response whose id is past the head: the child is killed and onclose says why', async () => {
    const h = harness(target([FIXTURE, 'normal'], { maxMessageBytes: 64 * 1024 }));
    await h.transport.start();
    const pid = h.transport.pid as number;
    await h.transport.send(call(5, 'huge', { bytes: 1024 * 1024, shape: 'id-last' }));
    const reason = await h.closed;
    expect(reason?.code).toBe('GW_UPSTREAM_MESSAGE_TOO_LARGE');
    expect(reason?.details).toMatchObject({ limit: 64 * 1024 });
    expect(h.undeliverable).toEqual([]);
    expect(await waitUntilGone([pid], 2000)).toEqual([]);
  });

  it('rate-limits stderr in the log, summarises what it suppressed, and keeps the last 20 lines', async () => {
    const script = `for (let i = 0; i < 500; i++) console.error('line ' + i); setInterval(() => {}, 1e6)`;
    const h = harness(target(['-e', script], { stderrLinesPerSecond: 10 }));
    await h.transport.start();
    await waitFor(() => h.transport.stderrTail().at(-1) === 'line 499');
    await h.transport.close();
    const logged = h.logs.filter((l) => l.msg === 'upstream stderr').map((l) => l.stderr);
    expect(logged).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i}`));
    const summary = h.logs.find((l) => l.msg === 'upstream stderr lines suppressed (rate limit)');
    expect(summary?.suppressed).toBe(490);
    expect(h.transport.stderrTail()).toEqual(Array.from({ length: 20 }, (_, i) => `line ${480 + i}`));
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function grandchildPid(transport: StdioTransport): Promise<number> {
  let pid: number | undefined;
  await waitFor(() => {
    const line = transport.stderrTail().find((l) => l.startsWith('grandchild-pid='));
    pid = line === undefined ? undefined : Number(line.slice('grandchild-pid='.length));
    return pid !== undefined;
  });
  return pid as number;
}

describe('stdio transport: shutdown', () => {
  it('a child that ignores SIGTERM and stdin EOF is SIGKILLed after two graces', async () => {
    const h = harness(target([FIXTURE, 'ignore-sigterm']));
    await h.transport.start();
    const pid = h.transport.pid as number;
    await h.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await h.next(byId(1));
    const t0 = Date.now();
    await h.transport.close();
    const elapsed = Date.now() - t0;
    expect(isAlive(pid)).toBe(false);
    expect(elapsed).toBeGreaterThanOrEqual(2 * GRACE - 20);
    expect(elapsed).toBeLessThan(4 * GRACE + 500);
    // It did get (and ignore) the SIGTERM before the SIGKILL.
    expect(h.transport.stderrTail()).toContain('ignoring SIGTERM');
    expect(h.closes).toEqual([undefined]);
  });

  it('close() also kills a grandchild left in the group after the leader exits on stdin EOF', async () => {
    const h = harness(target([FIXTURE, 'spawn-grandchild']));
    await h.transport.start();
    const pid = h.transport.pid as number;
    const grandchild = await grandchildPid(h.transport);
    expect(isAlive(grandchild)).toBe(true);
    expect(processGroupMembers(pid).sort()).toEqual([pid, grandchild].sort());
    await h.transport.close();
    expect(await waitUntilGone([pid, grandchild], 2000)).toEqual([]);
    expect(processGroupMembers(pid)).toEqual([]);
  });

  it('survives EPIPE: a child that closed its stdin makes send reject, not crash the gateway', async () => {
    const script = `require('fs').closeSync(0); setInterval(() => {}, 1e6)`;
    const h = harness(target(['-e', script]));
    await h.transport.start();
    await new Promise((r) => setTimeout(r, 200));
    const big = 'x'.repeat(256 * 1024);
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      outcomes.push(await h.transport.send(call(i, 'echo', { text: big })).then(() => 'sent', (e: GatewayError) => e.code));
    }
    expect(outcomes).toContain('GW_UPSTREAM_CLOSED');
    expect(isAlive(h.transport.pid as number)).toBe(true);
    await h.transport.close();
    expect(h.closes).toEqual([undefined]);
  });

  it('killAllChildrenNow() SIGKILLs every live group synchronously', async () => {
    const a = harness(target([FIXTURE, 'ignore-sigterm']));
    const b = harness(target([FIXTURE, 'spawn-grandchild']));
    await Promise.all([a.transport.start(), b.transport.start()]);
    const grandchild = await grandchildPid(b.transport);
    killAllChildrenNow();
    const pids = [a.transport.pid as number, b.transport.pid as number, grandchild];
    expect(await waitUntilGone(pids, 2000)).toEqual([]);
    expect((await a.closed)?.details).toMatchObject({ signal: 'SIGKILL' });
    expect((await b.closed)?.code).toBe('GW_UPSTREAM_EXITED');
  });
});
