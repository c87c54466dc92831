/**
 * A guardrail hook server for tests (docs/governance.md, "Guardrail hooks"): a real node:http
 * server that verifies each call's signature with the routine the docs describe (written here from the docs,
 * not imported from the gateway, so the docs are what is tested), records what it got, and
 * answers what the test's `decide` says. A decision of `{ hang: true }` never answers (a hook
 * that times out); `close` ends every open connection.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HookCall {
  readonly path: string;
  readonly body: Record<string, any>;
  /** The signature header verified with the shared secret (undefined: the server has no secret). */
  readonly verified: boolean | undefined;
}

export type Decision = Record<string, unknown> | { hang: true };

export interface HookServer {
  readonly url: string;
  readonly calls: HookCall[];
  close(): Promise<void>;
}

/**
 * The documented check: split `t=<unix>,v1=<hex>`, recompute HMAC-SHA256(secret, "<t>.<raw body>"),
 * compare in constant time, refuse a `t` more than 300 s from now.
 */
export function verifyAsDocumented(header: string | undefined, rawBody: string, secret: string, nowSec = Math.floor(Date.now() / 1000)): boolean {
  const fields = Object.fromEntries((header ?? '').split(',').map((kv) => kv.split('=')));
  const t = Number(fields.t);
  if (!Number.isInteger(t) || Math.abs(nowSec - t) > 300 || typeof fields.v1 !== 'string') return false;
  const expected = createHmac('sha256', secret).update(`${fields.t}.${rawBody}`).digest();
  const given = Buffer.from(fields.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export async function startHookServer(decide: (path: string, body: Record<string, any>) => Decision, secret?: string): Promise<HookServer> {
  const calls: HookCall[] = [];
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const verified = secret === undefined ? undefined : verifyAsDocumented(req.headers['x-switchboard-signature'] as string | undefined, raw, secret);
    const body = JSON.parse(raw) as Record<string, any>;
    calls.push({ path: req.url ?? '', body, verified });
    if (verified === false) {
      res.writeHead(401).end();
      return;
    }
    const decision = decide(req.url ?? '', body);
    if ('hang' in decision) return;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(decision));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
