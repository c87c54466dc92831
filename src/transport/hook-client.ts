/**
 * The HTTP client of the gateway's guardrail hooks (session/hooks/): one keep-alive undici Agent
 * for every hook of the gateway (hooks sit on the call path: a warm connection saves a handshake
 * per call), a deadline per call covering connect, headers and body, and a cap on the answer's
 * size, read as it arrives. Failures come back as a HookCallError naming what went wrong, never
 * the URL's secrets or the request body.
 */
import { Agent, request } from 'undici';

export type HookFailure = 'timeout' | 'unreachable' | 'http-status' | 'too-large' | 'not-json';

export class HookCallError extends Error {
  readonly failure: HookFailure;
  constructor(failure: HookFailure, message: string) {
    super(message);
    this.name = 'HookCallError';
    this.failure = failure;
  }
}

export interface HookCall {
  readonly url: string;
  readonly body: string;
  /** Extra request headers (the signature). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
}

export interface HookClient {
  /** POSTs `call.body` and resolves with the parsed JSON answer of a 2xx; rejects with HookCallError. */
  post(call: HookCall): Promise<unknown>;
  close(): Promise<void>;
}

export function createHookClient(): HookClient {
  let agent: Agent | undefined;
  // Made on first use: a gateway without hooks opens nothing.
  const dispatcher = () => (agent ??= new Agent({ keepAliveTimeout: 30_000 }));

  const read = async (body: AsyncIterable<Buffer>, max: number): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > max) throw new HookCallError('too-large', `hook answer exceeds ${max} bytes`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  };

  return {
    async post({ url, body, headers, timeoutMs, maxAnswerBytes }) {
      const signal = AbortSignal.timeout(timeoutMs);
      let text: string;
      try {
        const answer = await request(url, {
          method: 'POST',
          body,
          headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
          dispatcher: dispatcher(),
          signal,
        });
        if (answer.statusCode < 200 || answer.statusCode > 299) {
          answer.body.resume();
          throw new HookCallError('http-status', `hook answered HTTP ${answer.statusCode}`);
        }
        const length = Number(answer.headers['content-length']);
        if (length > maxAnswerBytes) {
          answer.body.destroy();
          throw new HookCallError('too-large', `hook answer exceeds ${maxAnswerBytes} bytes`);
        }
        text = await read(answer.body, maxAnswerBytes);
      } catch (err) {
        if (err instanceof HookCallError) throw err;
        if (signal.aborted) throw new HookCallError('timeout', `hook did not answer within ${timeoutMs} ms`);
        throw new HookCallError('unreachable', 'hook could not be reached');
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new HookCallError('not-json', 'hook answer is not JSON');
      }
    },
    async close() {
      const open = agent;
      agent = undefined;
      await open?.destroy().catch(() => undefined);
    },
  };
}
