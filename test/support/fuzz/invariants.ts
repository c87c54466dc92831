/**
 * What every answer of the gateway must be, whatever it was sent: a JSON-RPC 2.0 envelope (or a
 * bare 202 where the spec says so), and for an HTTP error, the status docs/errors.md gives for the
 * GW_* code in the body. The statuses and codes are read from docs/errors.md itself, so the
 * fuzzer checks the gateway against its documentation. Each check returns the problems it found
 * (empty: fine).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseBody } from '../recorder.ts';

interface Documented {
  jsonrpc: number;
  http: number;
}

/** GW code -> its row in docs/errors.md; and every HTTP status the page names. */
function readErrorsDoc(): { codes: Map<string, Documented>; statuses: Set<number> } {
  const text = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
  const codes = new Map<string, Documented>();
  // 200: answers; 202: notifications and responses (Streamable HTTP, legacy POST).
  const statuses = new Set<number>([200, 202]);
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const [, name, jsonrpc, http, when] = cells;
    if (name === undefined || !/^GW_[A-Z_]+$/.test(name)) continue;
    codes.set(name, { jsonrpc: Number(jsonrpc), http: Number(http) });
    if (Number(http) !== 200) statuses.add(Number(http));
    // GW_REQUEST_REFUSED answers with the parser's status (`408`, `431`, `414`), named in its text.
    if (name === 'GW_REQUEST_REFUSED') for (const m of (when ?? '').matchAll(/`(\d{3})`/g)) statuses.add(Number(m[1]));
  }
  return { codes, statuses };
}

export const DOCUMENTED = readErrorsDoc();
/** Close codes of docs/downstreams.md ("Close codes"). */
export const WS_CLOSE_CODES: ReadonlySet<number> = new Set([1000, 1001, 1003, 1007, 1008, 1009, 1011, 1013]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
// A number id may be one JSON.parse cannot hold (1E400 -> Infinity): the gateway keeps the text.
const isId = (v: unknown) => typeof v === 'string' || typeof v === 'number';

/** Why `value` is not a JSON-RPC 2.0 message, or undefined when it is one. */
export function envelopeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'not an object';
  if (value.jsonrpc !== '2.0') return `jsonrpc is ${JSON.stringify(value.jsonrpc)}`;
  if ('method' in value) {
    if (typeof value.method !== 'string') return 'method not a string';
    if ('id' in value && !isId(value.id)) return `request id ${JSON.stringify(value.id)}`;
    if ('params' in value && !isObject(value.params)) return 'params not an object';
    return undefined;
  }
  if (!('id' in value) || !(isId(value.id) || value.id === null)) return `response id ${JSON.stringify(value.id)}`;
  if (('result' in value) === ('error' in value)) return 'needs exactly one of result and error';
  if ('error' in value) {
    const error = value.error;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') return `bad error object ${JSON.stringify(error).slice(0, 200)}`;
    if (isObject(error.data) && error.data.code === 'GW_INTERNAL') return `GW_INTERNAL (an unplanned failure; log correlationId ${String(error.data.correlationId)})`;
  } else if (value.id === null) return 'a result with a null id';
  return undefined;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** 2026-07-28: the HTTP status of an error that is the whole response, by its JSON-RPC code. */
const SPEC_STATUS = new Map<number, number>([
  [-32601, 404],
  [-32020, 400],
  [-32021, 400],
  [-32022, 400],
]);

/** Problems with one HTTP answer. `sentIds`: JSON texts of the request ids the body carried. */
export function httpAnswerProblems(answer: HttpAnswer, sentIds: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const { status, contentType, text } = answer;
  if (!DOCUMENTED.statuses.has(status)) problems.push(`HTTP ${status} is not a documented status`);
  if (status === 202) {
    if (text !== '') problems.push(`202 with a body: ${text.slice(0, 200)}`);
    return problems;
  }
  let messages: unknown[];
  try {
    messages = parseBody(text, contentType);
  } catch {
    return [...problems, `HTTP ${status} body is not JSON (${contentType}): ${text.slice(0, 200)}`];
  }
  if (messages.length === 0) problems.push(`HTTP ${status} without a message`);
  for (const message of messages) {
    const problem = envelopeProblem(message);
    if (problem) problems.push(`HTTP ${status}: ${problem}: ${JSON.stringify(message).slice(0, 200)}`);
    const m = message as { id?: unknown; method?: unknown; error?: { data?: { code?: unknown; status?: unknown } } };
    if (m.method === undefined && m.id !== null && m.id !== undefined && !sentIds.has(JSON.stringify(m.id))) {
      problems.push(`answer to id ${JSON.stringify(m.id)}, which the request did not carry`);
    }
  }
  if (status >= 400) {
    const first = messages[0] as { error?: { code?: number; data?: { code?: string; status?: number } } } | undefined;
    const code = first?.error?.data?.code;
    const doc = code === undefined ? undefined : DOCUMENTED.codes.get(code);
    // A 2026 answer that is an upstream's own error carries the status the spec gives its code
    // (docs/errors.md, "Two ways an error reaches the client"), and no GW_* name.
    const upstream2026 = code === undefined && messages.length === 1 && SPEC_STATUS.get(first?.error?.code ?? 0) === status;
    if (upstream2026) return problems;
    if (messages.length !== 1 || doc === undefined) problems.push(`HTTP ${status} without a documented GW_* code: ${text.slice(0, 200)}`);
    else {
      const expected = code === 'GW_REQUEST_REFUSED' ? first?.error?.data?.status : doc.http;
      if (expected !== status) problems.push(`${code} answered with HTTP ${status}, docs/errors.md says ${expected}`);
      if (first?.error?.code !== doc.jsonrpc) problems.push(`${code} carries JSON-RPC ${first?.error?.code}, docs/errors.md says ${doc.jsonrpc}`);
    }
  }
  return problems;
}

/** Problems with one WebSocket text frame from the gateway. */
export function frameProblems(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [`frame is not JSON: ${text.slice(0, 200)}`];
  }
  const problem = envelopeProblem(value);
  return problem ? [`frame: ${problem}: ${text.slice(0, 200)}`] : [];
}
