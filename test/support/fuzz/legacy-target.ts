/**
 * Legacy HTTP+SSE (`/servers/rec/sse` + `/messages`): mutated messages POSTed to the session's
 * message endpoint. Each POST gets 202 or a documented error with a JSON-RPC body; every
 * `message` event on the stream must be a JSON-RPC envelope; a ping after each case must be
 * answered on the stream.
 */
import { openLegacyStream, type LegacyStream } from '../legacy-sse.ts';
import { drawMutated, excerptOf, requestIds, within, type CaseResult, type Target } from './case.ts';
import { envelopeProblem, httpAnswerProblems } from './invariants.ts';

const ANSWER_MS = 10_000;
const TOOLS = { echo: 'echo', slow: 'slow' };
let probes = 0;

export function createLegacyTarget(base: URL): Target {
  let stream: LegacyStream | undefined;
  let uses = 0;
  let ended = false;
  const sentIds = new Set<string>();

  async function fresh(): Promise<LegacyStream> {
    const s = await openLegacyStream(new URL('/servers/rec/sse', base));
    ended = false;
    void s.ended.then(() => (ended = true));
    sentIds.clear();
    sentIds.add('"init"');
    await s.post({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } });
    const answer = await within(ANSWER_MS, 'legacy initialize', s.nextMessage());
    if (answer.id !== 'init' || answer.result === undefined) throw new Error(`legacy initialize answered ${JSON.stringify(answer).slice(0, 200)}`);
    await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return s;
  }

  return {
    name: 'legacy',
    async run(rng, limits) {
      if (stream === undefined || ended || uses++ > 200) {
        stream?.close();
        stream = await fresh();
        uses = 0;
      }
      const s = stream;
      const { mutation, body } = drawMutated(rng, TOOLS, limits);
      const contentType = rng.chance(0.05) ? rng.pick(['text/plain', 'application/json; charset=utf-8', 'multipart/form-data']) : 'application/json';
      for (const id of requestIds(body)) sentIds.add(id);
      const result: CaseResult = { target: 'legacy /servers/rec/messages', mutation: contentType === 'application/json' ? mutation : `${mutation}+content-type:${contentType}`, excerpt: excerptOf(body), outcomes: [], problems: [] };
      const res = await within(ANSWER_MS, 'legacy POST', fetch(s.endpoint, { method: 'POST', headers: { 'content-type': contentType }, body }));
      const answer = { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
      result.outcomes.push(String(answer.status));
      result.problems.push(...httpAnswerProblems(answer, requestIds(body)));
      const probe = `probe-${++probes}`;
      sentIds.add(JSON.stringify(probe));
      const probeStatus = await s.post({ jsonrpc: '2.0', id: probe, method: 'ping' });
      if (probeStatus !== 202) {
        result.problems.push(`the probe POST got ${probeStatus}: the session is gone`);
        stream = undefined;
        return result;
      }
      try {
        for (;;) {
          const event = await within(ANSWER_MS, 'legacy stream', s.next());
          if (event.event !== 'message') continue;
          let message: unknown;
          try {
            message = JSON.parse(event.data);
          } catch {
            result.problems.push(`stream event is not JSON: ${event.data.slice(0, 200)}`);
            continue;
          }
          const problem = envelopeProblem(message);
          if (problem) result.problems.push(`stream: ${problem}: ${event.data.slice(0, 200)}`);
          const m = message as { id?: unknown; method?: unknown };
          if (m.method !== undefined || m.id === null || m.id === undefined) continue;
          if (m.id === probe) break;
          if (!sentIds.has(JSON.stringify(m.id))) result.problems.push(`stream answers id ${JSON.stringify(m.id)}, never sent`);
        }
      } catch (err) {
        result.problems.push(`probe: ${String(err)}`);
        stream?.close();
        stream = undefined;
      }
      return result;
    },
    async close() {
      stream?.close();
    },
  };
}
