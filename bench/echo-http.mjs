#!/usr/bin/env node
// The echo server (echo-core.mjs) over plain node:http as a Streamable HTTP endpoint (2025 era):
// POST /mcp with one JSON-RPC message, answered with application/json; initialize creates a
// session (Mcp-Session-Id header), a notification or answer gets 202, DELETE ends the session,
// an unknown session id gets 404. No SSE (GET is 405), no batches, no SDK.
// The same echo over WebSocket at /ws (subprotocol `mcp`, one JSON-RPC message per text frame, one
// session per connection): the reference for the gateway's WebSocket downstream. RFC 6455 framing
// written here (text, close, ping), so that the benchmark needs no WebSocket server package.
//
// Options: --port=N (default 0: any free port), --host=H (default 127.0.0.1),
//          --result-bytes=N (see echo-server.mjs).
// Prints one line of JSON on stdout once listening: {"url":"http://host:port/mcp","ws":"ws://host:port/ws"}.
// Exits when stdin ends (its starter went away) or on SIGTERM.
import { createHash, randomUUID } from 'node:crypto';
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
// ---- WebSocket (RFC 6455), server side: client frames are masked, ours are not.
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode, payload) {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return [head, payload];
}

server.on('upgrade', (req, socket) => {
  const protocols = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const key = req.headers['sec-websocket-key'];
  if (req.url !== '/ws' || typeof key !== 'string' || !protocols.includes('mcp')) {
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    return;
  }
  const accept = createHash('sha1').update(key + WS_GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\nsec-websocket-protocol: mcp\r\n\r\n`);
  socket.setNoDelay(true);
  const send = (opcode, payload) => {
    const [head, body] = frame(opcode, payload);
    socket.cork();
    socket.write(head);
    socket.write(body);
    socket.uncork();
  };
  let buffered = Buffer.alloc(0);
  let fragments = [];
  socket.on('data', (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      const fin = (buffered[0] & 0x80) !== 0;
      const opcode = buffered[0] & 0x0f;
      let len = buffered[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buffered.length < 4) return;
        len = buffered.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (buffered.length < 10) return;
        len = Number(buffered.readBigUInt64BE(2));
        at = 10;
      }
      const masked = (buffered[1] & 0x80) !== 0;
      const maskAt = at;
      if (masked) at += 4;
      if (buffered.length < at + len) return;
      const payload = Buffer.from(buffered.subarray(at, at + len));
      if (masked) for (let i = 0; i < len; i++) payload[i] ^= buffered[maskAt + (i & 3)];
      buffered = buffered.subarray(at + len);
      if (opcode === 0x8) {
        send(0x8, payload.subarray(0, 2));
        socket.end();
        return;
      }
      if (opcode === 0x9) {
        send(0xa, payload);
        continue;
      }
      if (opcode !== 0x1 && opcode !== 0x0) continue;
      fragments.push(payload);
      if (!fin) continue;
      const text = fragments.length === 1 ? fragments[0] : Buffer.concat(fragments);
      fragments = [];
      let msg;
      try {
        msg = JSON.parse(text);
      } catch {
        continue;
      }
      const out = answer(msg, resultBytes);
      if (out !== undefined) send(0x1, Buffer.from(JSON.stringify(out)));
    }
  });
  socket.on('error', () => socket.destroy());
});

server.keepAliveTimeout = 60_000;
server.listen(Number(opt('port', '0')), opt('host', '127.0.0.1'), () => {
  const { address, port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://${address}:${port}/mcp`, ws: `ws://${address}:${port}/ws` }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
