#!/usr/bin/env node
// The leanest MCP server we can write: NDJSON over stdio, no SDK, no validation, no allocation
// beyond one JSON.parse and one JSON.stringify per message. It is the upstream of the overhead
// benchmark (bench/overhead.ts), where it must never be the bottleneck.
//
//   initialize                 -> fixed capabilities (tools)
//   notifications/initialized  -> ignored (as is every other notification)
//   ping                       -> {}
//   tools/list                 -> [echo]
//   tools/call echo {text}     -> text content with the same text
//   anything else              -> -32601
//
// Exits when stdin ends, so it never outlives whoever started it.
import process from 'node:process';

const TOOLS = [
  {
    name: 'echo',
    description: 'Returns its text argument',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

const out = process.stdout;
const send = (message) => out.write(JSON.stringify(message) + '\n');

function onMessage(msg) {
  const { id, method, params } = msg;
  if (id === undefined || method === undefined) return; // notifications and stray answers
  switch (method) {
    case 'initialize':
      return send({
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'bench-echo', version: '1.0.0' },
        },
      });
    case 'ping':
      return send({ jsonrpc: '2.0', id, result: {} });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id, result: { tools: TOOLS } });
    case 'tools/call':
      if (params?.name === 'echo') {
        return send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: String(params.arguments?.text ?? '') }] } });
      }
      return send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `Unknown tool: ${params?.name}` }], isError: true } });
    default:
      return send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let start = 0;
  let nl;
  while ((nl = buffer.indexOf('\n', start)) !== -1) {
    const line = buffer.slice(start, nl);
    start = nl + 1;
    if (line.length === 0) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue; // not ours to judge: the benchmark never sends garbage
    }
    onMessage(msg);
  }
  buffer = start === 0 ? buffer : buffer.slice(start);
});
process.stdin.on('end', () => process.exit(0));
// The reader went away (the gateway or the benchmark died): nothing left to do.
out.on('error', () => process.exit(0));
