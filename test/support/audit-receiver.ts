/**
 * A real receiver for the audit trail's HTTP sink: node:http on 127.0.0.1 taking POSTed batches
 * (`{"schema":"switchboard.audit/v1","records":[...]}`), checking each one's X-Switchboard-Signature
 * with the gateway's own routine (a batch with a bad or missing one gets 401 and is counted in
 * `unsigned`), and keeping the records in arrival order. `down()` stops listening and cuts every
 * connection (the sink sees a refused connection); `up()` listens again on the same port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyHookSignature } from '../../src/session/hooks/signature.ts';

export interface AuditReceiver {
  readonly url: string;
  readonly records: Record<string, unknown>[];
  /** Raw batch bodies, as signed. */
  readonly batches: string[];
  /** Batches refused for their signature. */
  unsigned: number;
  waitForRecords(count: number, timeoutMs?: number): Promise<void>;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startAuditReceiver(secret: string): Promise<AuditReceiver> {
  const records: Record<string, unknown>[] = [];
  const batches: string[] = [];
  const waiters = new Set<{ count: number; resolve: () => void }>();
  let port = 0;
  let server: Server | undefined;

  const listen = async () => {
    const s = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const body = Buffer.concat(chunks).toString('utf8');
        const header = req.headers['x-switchboard-signature'];
        if (!verifyHookSignature(typeof header === 'string' ? header : undefined, body, secret)) {
          receiver.unsigned++;
          res.writeHead(401).end();
          return;
        }
        batches.push(body);
        records.push(...(JSON.parse(body) as { records: Record<string, unknown>[] }).records);
        for (const w of [...waiters]) if (records.length >= w.count) (waiters.delete(w), w.resolve());
        res.writeHead(204).end();
      })();
    });
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    if (s === undefined) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();

  const receiver: AuditReceiver = {
    url: `http://127.0.0.1:${port}/ingest`,
    records,
    batches,
    unsigned: 0,
    waitForRecords(count, timeoutMs = 20_000) {
      if (records.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = { count, resolve };
        waiters.add(waiter);
        setTimeout(() => {
          if (waiters.delete(waiter)) reject(new Error(`${records.length} of ${count} audit records within ${timeoutMs} ms`));
        }, timeoutMs).unref();
      });
    },
    down: stop,
    up: listen,
    close: stop,
  };
  return receiver;
}
