/**
 * HTTP the fuzzer (test/support/fuzz/http-target.ts) found answered outside the JSON-RPC
 * envelope or logged as an unplanned failure: a URL that is not valid percent-encoding got
 * fastify's own JSON (`FST_ERR_BAD_URL`); a chunked body whose chunk size is not hex was answered
 * correctly by the parser's handler, but the route reading that body then logged "unhandled error
 * in a route" at level error, a log line per malformed request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openSocket, rawExchange } from '../support/raw-http.ts';
import { recorderServer } from '../support/recorder.ts';

let gw: TestGateway;
const logLines: string[] = [];
const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

beforeAll(async () => {
  gw = await startTestGateway({ targets: { rec: recorderServer() }, logLines });
});
afterAll(async () => {
  await gw?.close();
});

const url = () => new URL(gw.url);
const head = (method: string, path: string, extra: string[]) =>
  [`${method} ${path} HTTP/1.1`, `Host: ${url().host}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', 'Connection: close', ...extra].join('\r\n');
const unplanned = () => logLines.filter((l) => /"level":(50|60)/.test(l));

describe('malformed HTTP', () => {
  it.each([
    ['POST', '/servers/%ZZ/mcp'],
    ['POST', '/mcp/%E0%A4%A'],
    ['GET', '/servers/rec%/sse'],
  ])('%s %s (bad percent-encoding) -> 400 with a JSON-RPC envelope', async (method, path) => {
    const answer = await rawExchange(url(), `${head(method, path, [`Content-Length: ${BODY.length}`])}\r\n\r\n${BODY}`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_INVALID_REQUEST' } } });
    expect(unplanned()).toEqual([]);
  });

  it('a chunk size that is not hex -> 400 with a JSON-RPC envelope, and no error logged', async () => {
    const answer = await rawExchange(url(), `${head('POST', '/servers/rec/mcp', ['Transfer-Encoding: chunked'])}\r\n\r\nzz\r\n${BODY}\r\n0\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'GW_INVALID_REQUEST' } } });
    // The route that was reading the body learns of it after the answer: give it a moment.
    await new Promise((r) => setTimeout(r, 100));
    expect(unplanned()).toEqual([]);
  });

  it('a request answered before its body is refused gets one answer, not two', async () => {
    // The bad URL is answered at once; the bad chunk size comes after, and the parser's refusal
    // used to be written as a second HTTP answer on the same socket.
    const socket = await openSocket(url());
    let all = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (all += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(`${head('POST', '/servers/%ZZ/mcp', ['Transfer-Encoding: chunked'])}\r\n\r\nzz\r\n${BODY}\r\n0\r\n\r\n`);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 3_000))]);
    socket.destroy();
    expect(all.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 400']);
    expect(all).toContain('"GW_INVALID_REQUEST"');
  });

  it('a good chunked body is served', async () => {
    const answer = await rawExchange(
      url(),
      `${head('POST', '/servers/rec/mcp', ['Transfer-Encoding: chunked'])}\r\n\r\n${Buffer.byteLength('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}').toString(16)}\r\n{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\r\n0\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('"protocolVersion"');
  });
});
