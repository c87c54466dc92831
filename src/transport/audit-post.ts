/**
 * The HTTP client of the audit trail's HTTP sink (observe/audit/http-sink.ts): one keep-alive
 * undici Agent per sink, a deadline per POST covering connect, headers and body, and the answer's
 * body discarded (a receiver says yes with any 2xx). Failures come back as an AuditPostError naming
 * what went wrong, never the URL's query or the body.
 */
import { Agent, request } from 'undici';

export class AuditPostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuditPostError';
  }
}

export interface AuditPoster {
  /** POSTs `body` (JSON); resolves on a 2xx, rejects with AuditPostError otherwise. */
  post(body: string, headers: Readonly<Record<string, string>>, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function createAuditPoster(url: string): AuditPoster {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  return {
    async post(body, headers, timeoutMs) {
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const answer = await request(url, { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' }, dispatcher: agent, signal });
        await answer.body.dump();
        if (answer.statusCode < 200 || answer.statusCode > 299) throw new AuditPostError(`audit receiver answered HTTP ${answer.statusCode}`);
      } catch (err) {
        if (err instanceof AuditPostError) throw err;
        throw new AuditPostError(signal.aborted ? `audit receiver did not answer within ${timeoutMs} ms` : 'audit receiver could not be reached');
      }
    },
    async close() {
      await agent.destroy().catch(() => undefined);
    },
  };
}
