/**
 * What a hook may answer, checked before anything acts on it (a hook is trusted to judge, not to
 * break the protocol): `allow`, `deny` with a reason, or `modify` with a replacement that is still
 * a valid params object (same tool, prompt or resource) or a valid result (a tools/call result is a
 * CallToolResult: a `content` array of typed blocks, `isError` a boolean, `structuredContent` an
 * object). Anything else is a hook failure (failureMode decides).
 */
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject } from '../../jsonrpc/types.ts';

export type HookPhase = 'request' | 'response';

export type HookVerdict =
  | { readonly action: 'allow' }
  | { readonly action: 'deny'; readonly reason: string }
  | { readonly action: 'modify'; readonly value: JsonObject };

/** A reason reaches clients: bounded, one line, no control characters. */
const MAX_REASON = 500;
const cleanReason = (reason: unknown): string =>
  typeof reason === 'string' && reason.trim() !== '' ? reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, MAX_REASON) : 'no reason given';

/** The param that names what a request is about: a replacement must keep it. */
const SUBJECT: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

function validParams(method: string, original: JsonObject | undefined, next: JsonObject): boolean {
  const field = SUBJECT[method];
  return field === undefined || next[field] === original?.[field];
}

function validCallToolResult(result: JsonObject): boolean {
  if (!Array.isArray(result.content)) return false;
  if (!result.content.every((block) => isObject(block) && typeof block.type === 'string')) return false;
  if (result.isError !== undefined && typeof result.isError !== 'boolean') return false;
  return result.structuredContent === undefined || isObject(result.structuredContent);
}

/**
 * The verdict in `answer`, or a string saying why it is not one. `original`: the request's params
 * (a `modify` of params must keep what they name).
 */
export function parseHookAnswer(answer: unknown, phase: HookPhase, method: string, original: JsonObject | undefined): HookVerdict | string {
  if (!isObject(answer)) return 'the answer is not a JSON object';
  switch (answer.action) {
    case 'allow':
      return { action: 'allow' };
    case 'deny':
      return { action: 'deny', reason: cleanReason(answer.reason) };
    case 'modify': {
      const key = phase === 'request' ? 'params' : 'result';
      const value = answer[key];
      if (!isObject(value)) return `"modify" needs "${key}" as an object`;
      if (phase === 'request' && !validParams(method, original, value)) return `"modify" must keep params.${SUBJECT[method]}`;
      if (phase === 'response' && method === 'tools/call' && !validCallToolResult(value)) return '"modify" must give a valid CallToolResult (a content array of typed blocks)';
      return { action: 'modify', value };
    }
    default:
      return 'unknown "action" (expected allow, deny or modify)';
  }
}
