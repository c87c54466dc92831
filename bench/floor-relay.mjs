#!/usr/bin/env node
// The floor of a stdio gateway (issue 34): the least any gateway in front of a stdio server must do
// per call, and nothing else. Streamable HTTP (2025 era) on plain node:http, the same wire as
// echo-http.mjs: POST /mcp with one JSON-RPC message answered with application/json; initialize
// spawns ONE child (echo-server.mjs) for the new session (Mcp-Session-Id header) and forwards the
// initialize to it; a notification or answer is written to the child and gets 202; DELETE ends the
// session and kills its child; an unknown session id gets 404, none at all 400.
// Per request: JSON.parse the body, give it the child's next id, write one line to the child's
// stdin, read NDJSON lines from its stdout, JSON.parse the answer, put the client's id back, reply.
// No validation, no auth, no policy, no logging, no SSE, no batches: a floor, not a gateway.
//
// Writes to the child: the lines of one event-loop turn leave in one `stdin.write` (setImmediate),
// measured against a write per request (--write=direct), alternating, 3 s per run, on the 2-core VM
// (2026-11-28), medians of 5-7 runs: 1x32 22.0k against 16.8k calls/s, 64x4 11.6k against 10.3k,
// 1x1 2.9k against 3.1k (within the noise of this machine: runs of both spread by 30%). Flushing at
// process.nextTick coalesced nothing (each request ends its own turn), and writing directly only
// while the child had nothing else in flight lost at 64x4. So the default is the turn's one write.
//
// Options: --port=N (default 0: any free port), --host=H (default 127.0.0.1),
//          --result-bytes=N (passed to each child, see echo-server.mjs), --write=turn|direct.
// Prints one line of JSON on stdout once listening: {"url":"http://host:port/mcp"}.
// Exits when stdin ends (its starter went away) or on SIGTERM, killing every child first.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const opt = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ECHO_SERVER = fileURLToPath(new URL('./echo-server.mjs', import.meta.url));
const childArgs = [ECHO_SERVER, ...argv.filter((a) => a.startsWith('--result-bytes='))];
const direct = opt('write', 'turn') === 'direct';
/** Session id -> its child. */
const sessions = new Map();

const JSON_HEADERS = { 'content-type': 'application/json' };
function reply(res, status, text, headers = JSON_HEADERS) {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
const rpcError = (status, code, message) => (res) => reply(res, status, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
const notFound = rpcError(404, -32001, 'Session not found');

/** One child and the calls waiting for its answers, keyed by the id the child saw. */
function startChild() {
  const child = spawn(process.execPath, childArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = new Map();
  const session = { child, pending, nextId: 1, queued: '', send: undefined };
  const flush = () => {
    child.stdin.write(session.queued);
    session.queued = '';
  };
  session.send = direct
    ? (line) => child.stdin.write(line)
    : (line) => {
        if (session.queued === '') setImmediate(flush);
        session.queued += line;
      };
  child.stdin.on('error', () => undefined); // the child died: its exit answers what waits
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    let text = buffer + chunk;
    let start = 0;
    let nl;
    while ((nl = text.indexOf('\n', start)) !== -1) {
      const msg = JSON.parse(text.slice(start, nl));
      start = nl + 1;
      const waiter = pending.get(msg.id);
      if (waiter === undefined) continue; // a notification or request of the child: not this floor's business
      pending.delete(msg.id);
      msg.id = waiter.id;
      reply(waiter.res, 200, JSON.stringify(msg), waiter.headers);
    }
    buffer = start === 0 ? text : text.slice(start);
    text = '';
  });
  child.once('exit', () => {
    for (const waiter of pending.values()) rpcError(502, -32603, 'upstream exited')(waiter.res);
    pending.clear();
  });
  return session;
}

function forward(session, msg, res, headers = JSON_HEADERS) {
  if (msg.id === undefined || msg.method === undefined) {
    // A notification or an answer: the child gets it, the client 202 at once.
    session.send(JSON.stringify(msg) + '\n');
    res.writeHead(202);
    return res.end();
  }
  const id = session.nextId++;
  session.pending.set(id, { id: msg.id, res, headers });
  msg.id = id;
  session.send(JSON.stringify(msg) + '\n');
}

function end(sid) {
  const session = sessions.get(sid);
  if (session === undefined) return false;
  sessions.delete(sid);
  session.child.kill('SIGKILL');
  return true;
}

function onMessage(req, res, body) {
  let msg;
  try {
    msg = JSON.parse(body);
  } catch {
    return rpcError(400, -32700, 'Parse error')(res);
  }
  if (msg.method === 'initialize') {
    const sid = randomUUID();
    sessions.set(sid, startChild());
    return forward(sessions.get(sid), msg, res, { ...JSON_HEADERS, 'mcp-session-id': sid });
  }
  const sid = req.headers['mcp-session-id'];
  if (sid === undefined) return rpcError(400, -32000, 'Mcp-Session-Id required')(res);
  const session = sessions.get(sid);
  if (session === undefined) return notFound(res);
  forward(session, msg, res);
}

const server = createServer((req, res) => {
  if (req.url !== '/mcp') return rpcError(404, -32000, 'Not Found')(res);
  if (req.method === 'DELETE') {
    if (!end(req.headers['mcp-session-id'])) return notFound(res);
    res.writeHead(200, { 'content-length': '0' });
    return res.end();
  }
  if (req.method !== 'POST') return rpcError(405, -32000, 'Method not allowed')(res);
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => onMessage(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
});

function exit() {
  for (const sid of [...sessions.keys()]) end(sid);
  process.exit(0);
}
server.keepAliveTimeout = 60_000;
server.listen(Number(opt('port', '0')), opt('host', '127.0.0.1'), () => {
  const { address, port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://${address}:${port}/mcp` }) + '\n');
});
process.stdin.on('end', exit);
process.stdin.resume();
process.on('SIGTERM', exit);
