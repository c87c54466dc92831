/**
 * Answers from 512 characters up are forwarded as the line the child wrote, with the client's id
 * spliced in (jsonrpc/wire-text.ts, issue 34 third round). What the chain changes must still
 * arrive changed at that size (redaction, a response hook's rewrite, on a server path and the
 * aggregate), and a client's string id with escapes comes back as the same value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { HookConfig, TargetConfig } from '../../src/config/types.ts';
import { RAW_TEXT_MIN_CHARS } from '../../src/jsonrpc/wire-text.ts';
import { startGateway, type RunningGateway } from '../../src/main.ts';
import { buildConfig, createTestLogger, stdioTarget } from '../support/gateway.ts';
import { startHookServer, type HookServer } from '../support/hook-server.ts';
import { rpc, type RawSession } from '../support/recorder.ts';

const SECRET = 'small-answer-hook-secret-0123456789';
const judged = { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/judged-server.mjs', import.meta.url)), '--foreign-tasks=6'] };
const recorder = { command: process.execPath, args: [fileURLToPath(new URL('../fixtures/recorder-server.mjs', import.meta.url))] };
/** Long enough to be kept as the child's line, far below the old 16 KiB threshold. */
const PAD = 'p'.repeat(RAW_TEXT_MIN_CHARS + 200);

let hooks: HookServer;
let gw: RunningGateway;
const sessions: Record<string, RawSession> = {};

const hook = (): HookConfig => ({
  url: `${hooks.url}/judge`,
  methods: ['tools/call'],
  phase: 'response',
  timeoutMs: 5_000,
  failureMode: 'closed',
  secret: SECRET,
  maxConcurrent: 64,
  maxAnswerBytes: 1024 * 1024,
});

beforeAll(async () => {
  hooks = await startHookServer((_path, body) => {
    const text = String(body.result?.content?.[0]?.text ?? '');
    return text.startsWith('swap-me') ? { action: 'modify', result: { content: [{ type: 'text', text: `swapped ${PAD}` }] } } : { action: 'allow' };
  }, SECRET);
  const config = buildConfig({ targets: { rec: recorder, plain: recorder, tasks: judged } });
  const targets = config.targets as Map<string, TargetConfig>;
  targets.set('rec', { ...stdioTarget('rec', recorder), hooks: [hook()], redact: { secrets: false, patterns: ['sw-internal-[0-9]+'], marker: '[REDACTED]' } });
  gw = await startGateway(config, { logger: createTestLogger('warn', undefined) });
  sessions.rec = await rpc.initialize(new URL('/servers/rec/mcp', gw.url));
  sessions.plain = await rpc.initialize(new URL('/servers/plain/mcp', gw.url));
  sessions.tasks = await rpc.initialize(new URL('/servers/tasks/mcp', gw.url));
  sessions.aggregate = await rpc.initialize(new URL('/mcp', gw.url));
});

afterAll(async () => {
  await gw?.close();
  await hooks?.close();
});

const echo = (idText: string, tool: string, text: string) =>
  `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"${tool}","arguments":{"text":${JSON.stringify(text)}}}}`;

async function call(session: string, tool: string, text: string, idText = '"c-1"') {
  const answer = await sessions[session]!.postRaw(echo(idText, tool, text));
  expect(answer.status).toBe(200);
  const result = answer.json.result as { content: Array<{ text: string }> };
  return { answer, text: result.content[0]!.text };
}

describe('small answers forwarded as the child wrote them', () => {
  it.each([
    ['rec', 'echo'],
    ['aggregate', 'rec__echo'],
  ])('redaction rewrites an answer of about 1 KB (%s)', async (session, tool) => {
    const { answer, text } = await call(session, tool, `${PAD} sw-internal-42`);
    expect(answer.text.length).toBeGreaterThan(RAW_TEXT_MIN_CHARS);
    expect(answer.text.length).toBeLessThan(16 * 1024);
    expect(text).toBe(`${PAD} [REDACTED]`);
    expect(answer.text).not.toContain('sw-internal-42');
  });

  it.each([
    ['rec', 'echo'],
    ['aggregate', 'rec__echo'],
  ])('a response hook rewrites an answer of about 1 KB (%s)', async (session, tool) => {
    const { answer, text } = await call(session, tool, `swap-me ${PAD}`);
    expect(text).toBe(`swapped ${PAD}`);
    expect(answer.text).not.toContain('swap-me');
  });

  const IDS = ['"a\\"b"', '"\\u00e9\\ud83d\\ude00 \\u2028"', '"é😀\\\\n"', '"\\/x"', '"x\\u0000y"'];
  it.each(IDS)('the string id %s comes back as the same value, the answer intact', async (idText) => {
    for (const [session, tool] of [['plain', 'echo'], ['aggregate', 'plain__echo'], ['rec', 'echo']] as const) {
      const { answer, text } = await call(session, tool, PAD, idText);
      expect(text).toBe(PAD);
      expect(answer.json.id).toBe(JSON.parse(idText));
      expect(answer.text).toContain(`"id":${JSON.stringify(JSON.parse(idText))}`);
    }
  });

  it('tasks/list of about 1 KB lists only the tasks this session created', async () => {
    const created = await sessions.tasks!.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'research', arguments: { topic: 't' }, task: { ttl: 60000 } } });
    const taskId = (created.json.result as { task: { taskId: string } }).task.taskId;
    expect(taskId).toMatch(/^task-\d/);
    const listed = await sessions.tasks!.request({ jsonrpc: '2.0', id: 2, method: 'tasks/list' });
    // The server's line lists six foreign tasks (about 900 characters): kept, then filtered.
    expect((listed.json.result as { tasks: Array<{ taskId: string }> }).tasks.map((t) => t.taskId)).toEqual([taskId]);
    expect(listed.text).not.toContain('task-foreign');
  });
});
