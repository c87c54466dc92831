/**
 * The 2025-era client of the bridge tests (test/integration/modern-upstream*.test.ts): the SDK v1
 * client declaring sampling and elicitation, with handlers that answer them the same way every
 * time, and small readers of what the 2026-only fixture recorded.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * An initialized SDK v1 client on `url`. With `handlers` (default) it answers sampling with
 * "forty-two (<the prompt>)" and elicitation with `{ sure: true }`; without, the SDK answers both
 * with an error.
 */
export async function connect(url: URL, handlers = true): Promise<Client> {
  const client = new Client({ name: 'v1-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  if (handlers) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content;
      const asked = first !== undefined && !Array.isArray(first) && first.type === 'text' ? first.text : '';
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `forty-two (${asked})` } };
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { sure: true } }));
  }
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

/** The McpError `promise` rejects with; anything else (or no rejection) throws. */
export async function errorOf(promise: Promise<unknown>): Promise<McpError> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (outcome instanceof McpError) return outcome;
  throw new Error(`expected an McpError, got ${String(outcome)}`);
}

/** The params of a recorded request. */
export const paramsOf = (seen: { body: Record<string, unknown> }) => seen.body.params as Record<string, unknown>;
