/**
 * Which downstream requests get an audit line (logging.audit) and what an observed request names:
 * the session core's bookkeeping of a request's subject (requests.ts).
 */
import type { JsonRpcRequest } from '../jsonrpc/types.ts';
import type { Pending } from './flavour.ts';

/** The requests that get an audit line (logging.audit): the param naming their subject, and the line's field for it (never `name`, the logger's own). */
export const AUDITED: Readonly<Record<string, readonly ['name' | 'uri', string]>> = { 'tools/call': ['name', 'tool'], 'prompts/get': ['name', 'prompt'], 'resources/read': ['uri', 'uri'] };

export function auditedOf(request: JsonRpcRequest): Pending['audited'] {
  const field = AUDITED[request.method]?.[0];
  if (field === undefined) return undefined;
  const name = request.params?.[field];
  return { name: typeof name === 'string' ? name : '', started: performance.now() };
}

/** What an observed request names (ObservedRequest.subject); list requests: their cursor, if any. */
export function subjectOf(request: JsonRpcRequest): string | undefined {
  const field = AUDITED[request.method]?.[0] ?? (request.method.endsWith('/list') ? 'cursor' : undefined);
  const value = field === undefined ? undefined : request.params?.[field];
  return typeof value === 'string' ? value : undefined;
}
