/**
 * The roots race (issue 22): a member that asks the client for its roots on `initialized`, as
 * server-filesystem does, must have the client's roots before the client's first call reaches it,
 * however slow the member is to ask or to take the answer. Through the aggregate `/mcp` (SDK
 * client, HTTP), over WebSocket, and with CPU burners beside it. The fixture serves its
 * command-line root until it has adopted the client's (test/fixtures/misbehaving-server.mjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/main.ts';
import { connectClient, startAggregateGateway, textOf } from '../support/aggregate.ts';
import { killTree } from '../support/processes.ts';
import { fixture } from '../support/recorder.ts';
import { openWs, wsUrl } from '../support/ws-client.ts';

const CLIENT_ROOT = 'file:///client-root';
const open: RunningGateway[] = [];
const burners: ChildProcess[] = [];
afterEach(async () => {
  for (const burner of burners.splice(0)) killTree(burner.pid);
  for (const gw of open.splice(0)) await gw.close();
});

const asksRoots = (...args: string[]) => ({ command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'asks-roots', ...args] });
const normal = () => ({ command: process.execPath, args: [fixture('misbehaving-server.mjs'), 'normal'] });

async function gateway(...args: string[]): Promise<RunningGateway> {
  const gw = await startAggregateGateway({ targets: { fs: asksRoots(...args), other: normal() } });
  open.push(gw);
  return gw;
}

/** A new session on the aggregate, the client declaring roots; the text of its first `fs__roots` call. */
async function firstCallOverHttp(gw: RunningGateway): Promise<string> {
  const client = await connectClient(gw, '/mcp', { capabilities: { roots: { listChanged: true } } });
  try {
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: CLIENT_ROOT, name: 'client' }] }));
    return textOf(await client.callTool({ name: 'fs__roots', arguments: {} }));
  } finally {
    await client.close();
  }
}

describe('the first call to a member waits for the roots exchange it triggered', () => {
  it('a member late to process `initialized` (its event loop busy 600 ms) still asks before the call reaches it', async () => {
    const gw = await gateway('--busy-on-initialized-ms=600');
    const seen: string[] = [];
    for (let session = 0; session < 3; session++) seen.push(await firstCallOverHttp(gw));
    expect(seen).toEqual([CLIENT_ROOT, CLIENT_ROOT, CLIENT_ROOT]);
  });

  it('a member that adopts the answer only after checking each root on disk has adopted it before the call', async () => {
    const gw = await gateway('--adopt-async');
    const seen: string[] = [];
    for (let session = 0; session < 10; session++) seen.push(await firstCallOverHttp(gw));
    expect(seen).toEqual(Array.from({ length: 10 }, () => CLIENT_ROOT));
  });

  it('over WebSocket: the same, the client answering roots/list on its socket', async () => {
    const gw = await gateway('--busy-on-initialized-ms=600', '--adopt-async');
    const peer = await openWs(wsUrl(gw.url, '/ws'), 'mcp');
    try {
      const init = { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'ws-roots', version: '1' } };
      peer.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: init });
      await peer.until('init');
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      peer.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'fs__roots', arguments: {} } });
      for (;;) {
        const message = await peer.next();
        if (message.method === 'roots/list') {
          peer.send({ jsonrpc: '2.0', id: message.id, result: { roots: [{ uri: CLIENT_ROOT, name: 'client' }] } });
          continue;
        }
        if (message.id !== 'call') continue;
        expect(textOf(message.result)).toBe(CLIENT_ROOT);
        break;
      }
    } finally {
      peer.socket.close();
      await peer.closed;
    }
  });

  it('under CPU load (two busy processes beside the gateway), every new session\'s first call sees the client\'s root', async () => {
    for (let i = 0; i < 2; i++) burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    const gw = await gateway('--adopt-async');
    const seen: string[] = [];
    for (let session = 0; session < 10; session++) seen.push(await firstCallOverHttp(gw));
    expect(seen).toEqual(Array.from({ length: 10 }, () => CLIENT_ROOT));
  }, 90_000);
});
