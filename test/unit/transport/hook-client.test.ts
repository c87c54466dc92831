/**
 * The hook client against a real node:http server: what it sends, and each way a hook can fail
 * (status, size, JSON, deadline) comes back as a HookCallError naming it, never the URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookClient, HookCallError } from '../../../src/transport/hook-client.ts';

let server: Server;
let base: string;
const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];
const client = createHookClient();

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
    if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"action":"allow"}');
    else if (req.url === '/500') res.writeHead(500).end('boom');
    else if (req.url === '/big') res.writeHead(200).end(`{"pad":"${'x'.repeat(4096)}"}`);
    else if (req.url === '/chunked-big') {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write('x'.repeat(1024));
      res.end();
    } else if (req.url === '/text') res.writeHead(200).end('not json');
    // '/hang': never answers
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const call = (path: string, timeoutMs = 5_000) => client.post({ url: `${base}${path}`, body: '{"phase":"request"}', headers: { 'x-switchboard-signature': 't=1,v1=ab' }, timeoutMs, maxAnswerBytes: 1024 });

async function failureOf(path: string, timeoutMs?: number): Promise<HookCallError> {
  const err = await call(path, timeoutMs).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(HookCallError);
  expect((err as Error).message).not.toContain(base);
  return err as HookCallError;
}

describe('hook client', () => {
  it('POSTs the body as JSON with the given headers and parses the answer', async () => {
    expect(await call('/ok')).toEqual({ action: 'allow' });
    expect(seen.at(-1)).toMatchObject({ body: '{"phase":"request"}', headers: { 'content-type': 'application/json', 'x-switchboard-signature': 't=1,v1=ab' } });
  });

  it.each([
    ['/500', 'http-status'],
    ['/big', 'too-large'],
    ['/chunked-big', 'too-large'],
    ['/text', 'not-json'],
  ])('%s fails as %s', async (path, failure) => {
    expect((await failureOf(path)).failure).toBe(failure);
  });

  it('a hook past its deadline fails as timeout; an unreachable one as unreachable', async () => {
    expect((await failureOf('/hang', 200)).failure).toBe('timeout');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await client.post({ url: `http://127.0.0.1:${port}/x`, body: '{}', headers: {}, timeoutMs: 5_000, maxAnswerBytes: 1024 }).catch((e: unknown) => e);
    expect((err as HookCallError).failure).toBe('unreachable');
  });
});
