#!/usr/bin/env node
// The floor of a relay hop (issue 34, the relayed call): a bare HTTP proxy in front of one upstream,
// the least a replica that does not own a session must do to relay a call to the one that does.
// node:http in, an undici Pool of keep-alive connections out; per request: read the body, send
// method, path, body and the content-type / accept / mcp-session-id headers upstream, and stream
// the answer (status, content-type, content-length, mcp-session-id, body) back as it comes.
// No lookup, no keys, no validation, no logging: a floor, not a relay.
//
// The client: undici `Pool.stream` (the answer written straight into the response), measured at
// 1x1 against `Pool.dispatch` with a handler writing each chunk (the same within noise: p50 0.48-
// 0.53 against 0.49-0.53 ms) and node:http.request on a keep-alive Agent piped into the response
// (0.53-0.60 ms, 15% more CPU); 3 alternating rounds of 3 s, 2-core VM, 2026-11-28.
//
// Options: --upstream=http://host:port (required), --port=N (default 0), --host=H (default
//          127.0.0.1), --connections=N (upstream keep-alive connections, default 64).
// Prints one line of JSON on stdout once listening: {"url":"http://host:port"}.
// Exits when stdin ends (its starter went away) or on SIGTERM.
import { createServer } from 'node:http';
import process from 'node:process';
import { Pool } from 'undici';

const argv = process.argv.slice(2);
const opt = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const upstream = opt('upstream', undefined);
if (upstream === undefined) throw new Error('--upstream=http://host:port is required');
const pool = new Pool(upstream, { connections: Number(opt('connections', '64')), keepAliveTimeout: 60_000 });

const FORWARDED = ['content-type', 'accept', 'mcp-session-id'];
const RETURNED = ['content-type', 'content-length', 'mcp-session-id'];

function pick(from, names) {
  const out = {};
  for (const name of names) if (from[name] !== undefined) out[name] = from[name];
  return out;
}

function fail(res, err) {
  if (res.headersSent) return res.destroy();
  res.writeHead(502, { 'content-type': 'text/plain' });
  res.end(String(err.message));
}

function relay(req, res, body) {
  pool.stream(
    { path: req.url, method: req.method, headers: pick(req.headers, FORWARDED), body },
    ({ statusCode, headers }) => {
      res.writeHead(statusCode, pick(headers, RETURNED));
      return res;
    },
    (err) => err && fail(res, err),
  );
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => relay(req, res, chunks.length === 0 ? null : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(opt('port', '0')), opt('host', '127.0.0.1'), () => {
  const { address, port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://${address}:${port}` }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
