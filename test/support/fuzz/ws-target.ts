/**
 * WebSocket (`/servers/rec/ws`): mutated messages as text frames (invalid UTF-8 included, which
 * the gateway must close with 1007), now and then a binary frame (1003) or one over the size
 * limit (1009). After each case a ping request must be answered, unless the gateway closed the
 * socket with a documented code; every frame it sent must be a JSON-RPC envelope.
 */
import { drawMutated, excerptOf, requestIds, type CaseResult, type Target } from './case.ts';
import { frameProblems, WS_CLOSE_CODES } from './invariants.ts';
import type { Rng } from './prng.ts';
import { openFrameSocket, type FrameSocket } from './ws-wire.ts';

const ANSWER_MS = 10_000;
const TOOLS = { echo: 'echo', slow: 'slow' };
let probes = 0;

export function createWsTarget(base: URL): Target {
  const url = new URL('/servers/rec/ws', base.href.replace(/^http/, 'ws'));
  let socket: FrameSocket | undefined;
  let uses = 0;
  const sentIds = new Set<string>();

  /** Waits for the answer to `id`, checking every frame on the way; problems when none comes. */
  async function until(s: FrameSocket, id: string, problems: string[]): Promise<boolean> {
    const deadline = Date.now() + ANSWER_MS;
    while (Date.now() < deadline) {
      for (const text of s.take()) {
        const problems0 = frameProblems(text);
        problems.push(...problems0);
        if (problems0.length > 0) continue;
        const m = JSON.parse(text) as { id?: unknown; method?: unknown };
        if (m.method !== undefined || m.id === null || m.id === undefined) continue;
        if (m.id === id) return true;
        if (!sentIds.has(JSON.stringify(m.id))) problems.push(`frame answers id ${JSON.stringify(m.id)}, never sent on this socket`);
      }
      if (s.closed) return false;
      await s.wait(Math.max(1, deadline - Date.now()));
    }
    problems.push(`no answer to ${id} within ${ANSWER_MS} ms`);
    return false;
  }

  async function fresh(): Promise<FrameSocket> {
    const s = await openFrameSocket(url);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });
    s.send(Buffer.from(init));
    sentIds.clear();
    sentIds.add('"init"');
    const problems: string[] = [];
    if (!(await until(s, 'init', problems))) throw new Error(`WebSocket initialize failed: ${problems.join('; ')} (close ${s.closeCode})`);
    s.send(Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}'));
    return s;
  }

  return {
    name: 'ws',
    async run(rng: Rng, limits) {
      if (socket === undefined || socket.closed || uses++ > 200) {
        socket?.close();
        socket = await fresh();
        uses = 0;
      }
      const s = socket;
      let { mutation, body } = drawMutated(rng, TOOLS, limits);
      let opcode = 0x1;
      if (rng.chance(0.03)) {
        mutation = `binary-frame(${mutation})`;
        opcode = 0x2;
      } else if (rng.chance(0.02)) {
        mutation = 'frame-over-limit';
        body = Buffer.alloc(limits.maxBodyBytes + 1, 0x20);
      }
      for (const id of requestIds(body)) sentIds.add(id);
      const result: CaseResult = { target: 'ws /servers/rec/ws', mutation, excerpt: excerptOf(body), outcomes: [], problems: [] };
      s.send(body, opcode);
      const probe = `probe-${++probes}`;
      sentIds.add(JSON.stringify(probe));
      s.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: probe, method: 'ping' })));
      const answered = await until(s, probe, result.problems);
      if (answered) result.outcomes.push('answered');
      else if (s.closed || s.closeCode !== undefined) {
        result.outcomes.push(`close ${s.closeCode ?? 'none'}`);
        if (s.closeCode === undefined) result.problems.push('socket dropped without a close frame');
        else if (!WS_CLOSE_CODES.has(s.closeCode)) result.problems.push(`close code ${s.closeCode} is not documented`);
        socket = undefined;
      }
      return result;
    },
    async close() {
      socket?.close();
    },
  };
}
