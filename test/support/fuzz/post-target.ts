/**
 * Streamable HTTP (POST `/mcp`, 2025 era): mutated messages, batches on 2025-03-26 and
 * 2025-11-25 sessions, colliding progress tokens and duplicate ids sent at once, wrong headers.
 * Sessions are opened as a client would and replaced when they end or have served a while.
 */
import type { JsonObject, SeedContext } from './corpus.ts';
import { drawMutated, drawSeed, excerptOf, freshId, requestIds, within, type CaseResult, type Named, type Target } from './case.ts';
import { httpAnswerProblems } from './invariants.ts';
import { mutationNamed, serialize, type MutationLimits } from './mutate.ts';
import type { Rng } from './prng.ts';

const ANSWER_MS = 15_000;
const LIGHT = ['valid', 'odd-id', 'wrong-type', 'drop-field', 'unknown-method', 'answer-to-nothing', 'cancel-for-nothing', 'progress-for-nothing', 'extra-fields'];

interface Endpoint {
  path: string;
  version: '2025-03-26' | '2025-11-25';
  tools: SeedContext['tools'];
}
const ENDPOINTS: readonly Endpoint[] = [
  { path: '/servers/rec/mcp', version: '2025-11-25', tools: { echo: 'echo', slow: 'slow' } },
  { path: '/servers/rec/mcp', version: '2025-03-26', tools: { echo: 'echo', slow: 'slow' } },
  { path: '/mcp', version: '2025-11-25', tools: { echo: 'rec__echo', slow: 'rec__slow' } },
  { path: '/mcp', version: '2025-03-26', tools: { echo: 'rec__echo', slow: 'rec__slow' } },
];

interface Session {
  id: string;
  uses: number;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
  session: string | null;
}

async function postBytes(url: URL, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(ANSWER_MS) });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, session: res.headers.get('mcp-session-id') };
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A header of the request set wrong (or removed: `undefined`). */
function wrongHeader(rng: Rng): [string, string | undefined] {
  const name = rng.pick(['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'origin', 'last-event-id', 'content-encoding']);
  const values: Record<string, Array<string | undefined>> = {
    accept: [undefined, 'application/json', 'text/event-stream', '*/*', 'text/html', ''],
    'content-type': [undefined, 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'application/jsonx', ''],
    'mcp-protocol-version': ['', '2099-01-01', 'garbage', '2024-11-05', '2025-03-26', '2026-07-28', '2025-11-25, 2025-06-18'],
    'mcp-session-id': [undefined, 'nope', 'x'.repeat(5_000), '../../etc/passwd', ' '],
    origin: ['https://evil.example', 'null', 'http://localhost:1', 'file://'],
    'last-event-id': ['garbage', '999999', ''],
    'content-encoding': ['gzip', 'br', 'identity'],
  };
  return [name, rng.pick(values[name] ?? [undefined])];
}

export function createPostTarget(base: URL): Target {
  const sessions = new Map<Endpoint, Session>();

  async function open(endpoint: Endpoint): Promise<Session> {
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: endpoint.version, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } };
    const answer = await postBytes(new URL(endpoint.path, base), Buffer.from(JSON.stringify(init)), BASE_HEADERS);
    if (answer.status !== 200 || answer.session === null) throw new Error(`initialize at ${endpoint.path}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
    const headers = { ...BASE_HEADERS, 'mcp-session-id': answer.session, 'mcp-protocol-version': endpoint.version };
    await postBytes(new URL(endpoint.path, base), Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}'), headers);
    return { id: answer.session, uses: 0 };
  }

  async function end(endpoint: Endpoint, session: Session): Promise<void> {
    sessions.delete(endpoint);
    await fetch(new URL(endpoint.path, base), { method: 'DELETE', headers: { 'mcp-session-id': session.id } }).then((r) => r.arrayBuffer(), () => undefined);
  }

  async function sessionFor(endpoint: Endpoint): Promise<Session> {
    const current = sessions.get(endpoint);
    if (current && current.uses < 200) return current;
    if (current) await end(endpoint, current);
    const fresh = await open(endpoint);
    sessions.set(endpoint, fresh);
    return fresh;
  }

  /** The bodies of one case (sent at once) and the header overrides. */
  function build(rng: Rng, endpoint: Endpoint, limits: MutationLimits): { mutation: string; bodies: Buffer[]; headers: Record<string, string | undefined> } {
    // Stateless (2026-07-28) seeds go without a session; their version claim is in each body.
    const roll = rng.next();
    if (roll < 0.1) {
      const size = rng.range(0, 6);
      const items = Array.from({ length: size }, () => mutationNamed(rng.pick(LIGHT)).apply(drawSeed(rng, endpoint.tools), rng, limits).toString());
      return { mutation: `batch(${size})@${endpoint.version}`, bodies: [Buffer.from(`[${items.join(',')}]`)], headers: {} };
    }
    if (roll < 0.15) {
      const token = rng.pick(['"p-0"', '1', JSON.stringify(`fz-shared`)]);
      const calls = Array.from({ length: rng.range(2, 3) }, () =>
        serialize({ jsonrpc: '2.0', id: freshId(rng), method: 'tools/call', params: { name: endpoint.tools.slow, arguments: { ms: 30, steps: 2 }, _meta: { progressToken: JSON.parse(token) as string } } }),
      );
      const note = serialize({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: JSON.parse(token) as string, progress: 1 } });
      return { mutation: 'colliding-progress', bodies: [...calls, note].map((t) => Buffer.from(t)), headers: {} };
    }
    if (roll < 0.18) {
      const id = freshId(rng);
      const body = Buffer.from(serialize({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: endpoint.tools.slow, arguments: { ms: 30 } } }));
      return { mutation: 'duplicate-id', bodies: [body, body], headers: {} };
    }
    if (roll < 0.28) {
      const [name, value] = wrongHeader(rng);
      const seed: JsonObject = { jsonrpc: '2.0', id: freshId(rng), method: 'tools/call', params: { name: endpoint.tools.echo, arguments: { text: 'h' } } };
      return { mutation: `header:${name}=${value === undefined ? '(none)' : value.slice(0, 30)}`, bodies: [Buffer.from(serialize(seed))], headers: { [name]: value } };
    }
    const { mutation, body, era, named } = drawMutated(rng, endpoint.tools, limits);
    if (era === '2026') return { mutation: `2026:${mutation}`, bodies: [body], headers: { 'mcp-session-id': undefined, ...modernHeaders(named) } };
    return { mutation, bodies: [body], headers: {} };
  }

  return {
    name: 'post',
    async run(rng, limits) {
      const endpoint = rng.pick(ENDPOINTS);
      const session = await sessionFor(endpoint);
      session.uses++;
      const { mutation, bodies, headers: overrides } = build(rng, endpoint, limits);
      const headers: Record<string, string> = { ...BASE_HEADERS, 'mcp-session-id': session.id, 'mcp-protocol-version': endpoint.version };
      for (const [name, value] of Object.entries(overrides)) {
        if (value === undefined) delete headers[name];
        else headers[name] = value;
      }
      const result: CaseResult = { target: `post ${endpoint.path}`, mutation, excerpt: bodies.map(excerptOf).join(' | '), outcomes: [], problems: [] };
      const url = new URL(endpoint.path, base);
      const answers = await Promise.allSettled(bodies.map((body) => within(ANSWER_MS + 1_000, 'POST', postBytes(url, body, headers))));
      for (const [i, settled] of answers.entries()) {
        if (settled.status === 'rejected') {
          result.problems.push(`POST failed: ${String(settled.reason)}`);
          continue;
        }
        const answer = settled.value;
        result.outcomes.push(String(answer.status));
        result.problems.push(...httpAnswerProblems(answer, requestIds(bodies[i] ?? Buffer.alloc(0))));
        // A new session made by an initialize the mutation let through: not ours to keep.
        if (answer.session !== null && answer.session !== session.id) {
          await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': answer.session } }).then((r) => r.arrayBuffer(), () => undefined);
        }
        const ended = answer.status === 404 && headers['mcp-session-id'] === session.id && answer.text.includes('GW_SESSION_NOT_FOUND');
        if (ended) {
          result.problems.push('the session ended under a fuzz case');
          sessions.delete(endpoint);
        }
      }
      return result;
    },
    async close() {
      for (const [endpoint, session] of [...sessions]) await end(endpoint, session);
    },
  };
}

/** The standard headers a 2026 client sends with its request (SEP-2243). */
function modernHeaders({ method, name }: Named): Record<string, string> {
  const headers: Record<string, string> = { 'mcp-protocol-version': '2026-07-28' };
  if (method !== undefined) headers['mcp-method'] = method;
  if (name !== undefined) headers['mcp-name'] = name;
  return headers;
}
