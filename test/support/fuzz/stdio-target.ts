/**
 * stdio framing from an upstream: a tools/call `fuzz` on `/servers/fuzzy/mcp` makes the fixture
 * child write what this target generates: garbage, partial lines (finished later, or never),
 * wrong ids, huge lines, invalid UTF-8, deep nesting, stray server requests and notifications,
 * and usually the right answer at the end. Whatever it writes, the client's call must end with a
 * JSON-RPC answer to its own id (a result, or an error such as GW_UPSTREAM_TIMEOUT), in time.
 */
import { upstreamLines } from './corpus.ts';
import { excerptOf, freshId, within, type CaseResult, type Target } from './case.ts';
import { httpAnswerProblems } from './invariants.ts';
import { MUTATIONS, serialize, type MutationLimits } from './mutate.ts';
import type { Rng } from './prng.ts';
import { parseBody } from '../recorder.ts';

interface Chunk {
  b64: string;
  repeat?: number;
  delayMs?: number;
}
const ANSWER = '{"jsonrpc":"2.0","id":"$ID","result":{"content":[{"type":"text","text":"finally"}]}}\n';
const chunk = (text: string | Buffer, extra: Omit<Chunk, 'b64'> = {}): Chunk => ({ b64: Buffer.from(text).toString('base64'), ...extra });

/** What the fixture writes for one case, and a name for the report. */
function script(rng: Rng, upstreamMaxMessageBytes: number, limits: MutationLimits): { names: string[]; chunks: Chunk[] } {
  const names: string[] = [];
  const chunks: Chunk[] = [];
  for (let i = rng.range(1, 3); i > 0; i--) {
    const kind = rng.int(10);
    if (kind === 0) {
      names.push('huge-line');
      chunks.push(chunk('{"jsonrpc":"2.0","id":"$ID","result":{"x":"'), chunk('x', { repeat: upstreamMaxMessageBytes + rng.range(1, 1000) }), chunk('"}}\n'));
    } else if (kind === 1) {
      names.push('partial-line');
      const text = ANSWER;
      const cut = rng.range(1, text.length - 2);
      chunks.push(chunk(text.slice(0, cut)), chunk(text.slice(cut), { delayMs: rng.range(0, 30) }));
    } else if (kind === 2) {
      names.push('garbage');
      chunks.push(chunk(rng.pick(['not json\n', '\n\n', '\r\n', '\u001b[31mred\u001b[0m\n', '[1,2,3]\n', 'null\n', '{}\n', '{"jsonrpc":"2.0"}\n', '\uFEFF{"jsonrpc":"2.0","method":"x"}\n'])));
    } else {
      const mutation = rng.pick(MUTATIONS.filter((m) => m.name !== 'huge-string'));
      names.push(`line:${mutation.name}`);
      const bytes = mutation.apply(rng.pick(upstreamLines(rng)), rng, { maxBodyBytes: Math.min(limits.maxBodyBytes, 64 * 1024) });
      chunks.push(chunk(Buffer.concat([bytes, Buffer.from(rng.chance(0.1) ? '\r\n' : '\n')])));
    }
  }
  if (rng.chance(0.85)) {
    names.push('answer');
    chunks.push(chunk(ANSWER));
  } else names.push('no-answer');
  return { names, chunks };
}

export function createStdioTarget(base: URL, upstreamMaxMessageBytes: number, upstreamTimeoutMs: number): Target {
  const url = new URL('/servers/fuzzy/mcp', base);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let session: string | undefined;
  let uses = 0;

  async function open(): Promise<string> {
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } };
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
    const text = await res.text();
    const id = res.headers.get('mcp-session-id');
    if (res.status !== 200 || id === null) throw new Error(`initialize fuzzy: HTTP ${res.status} ${text.slice(0, 200)}`);
    await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' }).then((r) => r.arrayBuffer());
    return id;
  }

  return {
    name: 'stdio',
    async run(rng, limits) {
      if (session === undefined || uses++ > 200) {
        if (session !== undefined) await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } }).then((r) => r.arrayBuffer());
        session = await open();
        uses = 0;
      }
      const id = freshId(rng);
      const exit = rng.chance(0.02);
      const { names, chunks } = exit ? { names: ['exit'], chunks: [] } : script(rng, upstreamMaxMessageBytes, limits);
      const call = exit
        ? { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exit', arguments: { code: rng.range(0, 9) } } }
        : { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fuzz', arguments: { chunks: chunks as never } } };
      const body = Buffer.from(serialize(call));
      const result: CaseResult = { target: 'stdio /servers/fuzzy', mutation: names.join('+'), excerpt: excerptOf(Buffer.from(JSON.stringify(chunks.map((c) => Buffer.from(c.b64, 'base64').subarray(0, 80).toString('latin1'))))), outcomes: [], problems: [] };
      const res = await within(upstreamTimeoutMs + 10_000, 'stdio call', fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body }));
      const answer = { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
      result.outcomes.push(String(answer.status));
      result.problems.push(...httpAnswerProblems(answer, new Set([JSON.stringify(id)])));
      let last: { id?: unknown; result?: unknown; error?: { data?: { code?: string } } } | undefined;
      try {
        last = parseBody(answer.text, answer.contentType).at(-1) as typeof last;
      } catch {
        // reported by httpAnswerProblems
      }
      if (answer.status === 200 && (last?.id !== id || (last.result === undefined && last.error === undefined))) {
        result.problems.push(`the call got no answer to its own id: ${answer.text.slice(0, 300)}`);
      }
      if (last?.error?.data?.code !== undefined) result.outcomes.push(last.error.data.code);
      // An exit ends the session (onExit: end): the next case opens another.
      if (exit || last?.error?.data?.code === 'GW_UPSTREAM_EXITED') session = undefined;
      return result;
    },
    async close() {
      if (session !== undefined) await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } }).then((r) => r.arrayBuffer(), () => undefined);
    },
  };
}
