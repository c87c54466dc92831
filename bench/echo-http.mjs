#!/usr/bin/env node
// The echo server (echo-core.mjs) over plain node:http as a Streamable HTTP endpoint (2025 era):
// POST /mcp with one JSON-RPC message, answered with application/json; initialize creates a
// session (Mcp-Session-Id header), a notification or answer gets 202, DELETE ends the session,
// an unknown session id gets 404. No SSE (GET is 405), no batches, no SDK.
//
// Options: --port=N (default 0: any free port), --host=H (default 127.0.0.1),
//          --result-bytes=N (see echo-server.mjs).
// Prints one line of JSON on stdout once listening: {"url":"http://host:port/mcp"}.
// Exits when stdin ends (its starter went away) or on SIGTERM.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import process from 'node:process';
import { answer, defaultResultBytes } from './echo-core.mjs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const resultBytes = defaultResultBytes(argv);
const sessions = new Set();

function reply(res, status, body, headers = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const server = createServer((req, res) => {
  if (req.url !== '/mcp') return reply(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not Found' } });
  const sid = req.headers['mcp-session-id'];
  if (req.method === 'DELETE') {
    sessions.delete(sid);
    return reply(res, 200);
  }
  if (req.method !== 'POST') return reply(res, 405, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed' } }, { allow: 'POST, DELETE' });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let msg;
    try {
      msg = JSON.parse(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    } catch {
      return reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (msg.method === 'initialize') {
      const id = randomUUID();
      sessions.add(id);
      return reply(res, 200, answer(msg, resultBytes), { 'mcp-session-id': id });
    }
    if (typeof sid !== 'string' || !sessions.has(sid)) {
      return reply(res, sid === undefined ? 400 : 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    }
    const out = answer(msg, resultBytes);
    if (out === undefined) {
      res.writeHead(202);
      return res.end();
    }
    reply(res, 200, out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(opt('port', '0')), opt('host', '127.0.0.1'), () => {
  const { address, port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://${address}:${port}/mcp` }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
