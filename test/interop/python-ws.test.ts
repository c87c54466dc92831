/**
 * Interop with the Python `websockets` client, used as the Python MCP SDK's WebSocket client uses it
 * (subprotocol "mcp", one JSON-RPC object per text frame). It needs Debian's python3-websockets
 * (PyPI is not reachable here), so it is not part of `npm test`: `.ci/run` installs the package and
 * runs `npm run test:interop`.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { recorderServer } from '../support/recorder.ts';
import { wsUrl } from '../support/ws-client.ts';

describe('WebSocket downstream: other clients', () => {
  it('interoperates with the Python websockets client as the Python SDK uses it', async () => {
    const gw = await startTestGateway({ targets: { rec: recorderServer() } });
    try {
      const script = `
import asyncio, json, sys
import websockets
async def main(url):
    async with websockets.connect(url, subprotocols=["mcp"]) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "1"}}}))
        init = json.loads(await ws.recv())
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "from python"}}}))
        answer = json.loads(await ws.recv())
        print(json.dumps({"subprotocol": ws.subprotocol, "init": init, "answer": answer}))
asyncio.run(main(sys.argv[1]))
`;
      const child = spawn('/usr/bin/python3', ['-c', script, wsUrl(gw.url, '/ws').href]);
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(err).toBe('');
      expect(code).toBe(0);
      const result = JSON.parse(out) as Record<string, unknown>;
      expect(result).toMatchObject({
        subprotocol: 'mcp',
        init: { id: 1, result: { protocolVersion: '2025-06-18' } },
        answer: { id: 2, result: { content: [{ text: 'from python' }] } },
      });
    } finally {
      await gw.close();
    }
  });
});
