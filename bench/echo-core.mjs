// The echo server's logic, shared by its two wires (echo-server.mjs: NDJSON over stdio;
// echo-http.mjs: Streamable HTTP on node:http). No SDK, no validation: one JSON.parse and one
// JSON.stringify per message, so that the upstream is never the bottleneck of a benchmark.
//
//   initialize                 -> the client's protocol version, capabilities { tools }
//   ping                       -> {}
//   tools/list                 -> [echo]
//   tools/call echo {text, bytes?} -> one text content: `text`, or, when `bytes` (or the server's
//                                 default result size) is larger than `text`, `text` followed by
//                                 "." padding up to exactly that many characters (ASCII, so bytes)
//   anything else              -> -32601
// Notifications and stray answers are ignored.

export const TOOLS = [
  {
    name: 'echo',
    description: 'Returns its text argument, padded with "." to `bytes` characters when given',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' }, bytes: { type: 'integer', minimum: 0 } },
      required: ['text'],
    },
  },
];

/** `--result-bytes=N` on the command line: the default size of every echo result. */
export function defaultResultBytes(argv) {
  const arg = argv.find((a) => a.startsWith('--result-bytes='));
  const n = arg === undefined ? 0 : Number(arg.slice('--result-bytes='.length));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad ${arg}`);
  return n;
}

let padCache = '';
function padded(text, bytes) {
  if (bytes <= text.length) return text;
  const need = bytes - text.length;
  if (padCache.length < need) padCache = '.'.repeat(need);
  return text + padCache.slice(0, need);
}

/**
 * The answer to one parsed message, as an object, or undefined for a notification or an answer.
 * `resultBytes` is the default padding of echo results.
 */
export function answer(msg, resultBytes) {
  const { id, method, params } = msg;
  if (id === undefined || method === undefined) return undefined;
  switch (method) {
    case 'initialize':
      return {
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'bench-echo', version: '1.0.0' },
        },
      };
    case 'ping':
      return { jsonrpc: '2.0', id, result: {} };
    case 'tools/list':
      return { jsonrpc: '2.0', id, result: { tools: TOOLS } };
    case 'tools/call': {
      if (params?.name === 'echo') {
        const args = params.arguments ?? {};
        const bytes = typeof args.bytes === 'number' ? args.bytes : resultBytes;
        return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: padded(String(args.text ?? ''), bytes) }] } };
      }
      return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `Unknown tool: ${params?.name}` }], isError: true } };
    }
    default:
      return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
  }
}
