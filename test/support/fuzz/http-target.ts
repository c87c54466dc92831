/**
 * HTTP below the JSON: malformed requests written by hand over TCP (bad chunked encoding,
 * conflicting lengths, headers without a colon, huge URLs and headers, odd paths), and the other
 * methods on an MCP endpoint (GET with odd Accept or Last-Event-ID, DELETE of unknown sessions,
 * PUT). Whatever Node's parser or the routes refuse must come back with a documented status and,
 * where there is a body, a JSON-RPC error envelope.
 */
import { rawExchange } from '../raw-http.ts';
import { excerptOf, within, type CaseResult, type Target } from './case.ts';
import { httpAnswerProblems } from './invariants.ts';
import type { Rng } from './prng.ts';

const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

/** A malformed or unusual HTTP/1.1 request, as text. */
function rawRequestText(rng: Rng, host: string): { name: string; text: string } {
  const path = rng.pick(['/mcp', '/servers/rec/mcp', '/servers/rec/messages?sessionId=x', '/servers/%ZZ/mcp', '/servers/../mcp', `/${'a'.repeat(rng.pick([100, 20_000]))}`, '/mcp?x=%00', '//mcp', 'http://evil.example/mcp', '*']);
  const head = (extra: string[]) => [`POST ${path} HTTP/1.1`, `Host: ${host}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', 'Connection: close', ...extra].join('\r\n');
  const kinds: Array<() => { name: string; text: string }> = [
    () => ({ name: 'chunked-bad-size', text: `${head(['Transfer-Encoding: chunked'])}\r\n\r\nzz\r\n${BODY}\r\n0\r\n\r\n` }),
    () => ({ name: 'chunked-ok', text: `${head(['Transfer-Encoding: chunked'])}\r\n\r\n${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n` }),
    () => ({ name: 'te-and-cl', text: `${head(['Transfer-Encoding: chunked', `Content-Length: ${BODY.length}`])}\r\n\r\n${BODY}` }),
    () => ({ name: 'two-lengths', text: `${head([`Content-Length: ${BODY.length}`, 'Content-Length: 3'])}\r\n\r\n${BODY}` }),
    () => ({ name: 'negative-length', text: `${head(['Content-Length: -1'])}\r\n\r\n${BODY}` }),
    () => ({ name: 'no-colon', text: `${head(['This header has no colon', `Content-Length: ${BODY.length}`])}\r\n\r\n${BODY}` }),
    () => ({ name: 'huge-header', text: `${head([`X-Big: ${'b'.repeat(rng.pick([9_000, 70_000]))}`, `Content-Length: ${BODY.length}`])}\r\n\r\n${BODY}` }),
    () => ({ name: 'bad-version', text: `${head([`Content-Length: ${BODY.length}`]).replace('HTTP/1.1', rng.pick(['HTTP/9.9', 'HTTP/1.0', 'HTTX/1.1']))}\r\n\r\n${BODY}` }),
    () => ({ name: 'bad-method', text: `${head([`Content-Length: ${BODY.length}`]).replace('POST', rng.pick(['P0ST', 'PATCH', 'OPTIONS', 'TRACE', 'BREW']))}\r\n\r\n${BODY}` }),
    () => ({ name: 'lf-only', text: `${head([`Content-Length: ${BODY.length}`]).replaceAll('\r\n', '\n')}\n\n${BODY}` }),
    () => ({ name: 'nul-in-header', text: `${head(['X-Nul: a\u0000b', `Content-Length: ${BODY.length}`])}\r\n\r\n${BODY}` }),
  ];
  return rng.pick(kinds)();
}

export function createHttpTarget(base: URL): Target {
  return {
    name: 'http',
    async run(rng) {
      if (rng.chance(0.6)) {
        const { name, text } = rawRequestText(rng, base.host);
        const result: CaseResult = { target: 'http raw', mutation: `raw:${name}`, excerpt: excerptOf(Buffer.from(text)), outcomes: [], problems: [] };
        const answer = await rawExchange(base, text, 5_000);
        result.outcomes.push(String(answer.status));
        if (answer.status === 0) return result; // closed without an answer: Node's parser may drop a request it cannot frame
        const chunked = /transfer-encoding: *chunked/i.test(answer.head);
        const length = /content-length: *(\d+)/i.exec(answer.head)?.[1];
        // Only the first answer: after it, the parser's own refusal of the rest may follow.
        const body = chunked
          ? answer.body.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n[^]*$/, '')
          : length === undefined ? answer.body : Buffer.from(answer.body).subarray(0, Number(length)).toString();
        const contentType = /content-type: *([^\r\n]+)/i.exec(answer.head)?.[1] ?? '';
        result.problems.push(...httpAnswerProblems({ status: answer.status, contentType, text: body }, new Set(['1'])));
        const answers = (answer.body.match(/HTTP\/1\.[01] \d{3} /g) ?? []).length + 1;
        if (answers > 1) result.problems.push(`${answers} HTTP answers to one request`);
        return result;
      }
      const method = rng.pick(['GET', 'DELETE', 'PUT', 'PATCH']);
      const headers: Record<string, string> = {};
      if (rng.chance(0.7)) headers['mcp-session-id'] = rng.pick(['nope', '', 'x'.repeat(300), '00000000-0000-0000-0000-000000000000']);
      if (method === 'GET') {
        headers.accept = rng.pick(['text/event-stream', 'application/json', '*/*', '']);
        if (rng.chance(0.5)) headers['last-event-id'] = rng.pick(['garbage', '0', '-1', '99999999999999999999', 'x'.repeat(500)]);
      }
      const path = rng.pick(['/mcp', '/servers/rec/mcp', '/servers/rec/sse', '/servers/rec/ws', '/servers/nope/mcp']);
      const result: CaseResult = { target: 'http methods', mutation: `method:${method}`, excerpt: `${method} ${path} ${JSON.stringify(headers).slice(0, 200)}`, outcomes: [], problems: [] };
      const controller = new AbortController();
      const res = await within(10_000, method, fetch(new URL(path, base), { method, headers, signal: controller.signal }));
      result.outcomes.push(String(res.status));
      const contentType = res.headers.get('content-type') ?? '';
      if (res.status === 200 && contentType.startsWith('text/event-stream')) {
        controller.abort(); // a stream opened: fine, and not ours to keep
        return result;
      }
      const text = await within(10_000, `${method} body`, res.text());
      if (res.status === 204 || (res.status === 200 && method === 'DELETE')) return result;
      result.problems.push(...httpAnswerProblems({ status: res.status, contentType, text }, new Set()));
      return result;
    },
    close: async () => undefined,
  };
}
