/**
 * `Mcp-Param-*` headers for tools/call to a 2026-07-28 upstream (basic/transports, "Custom
 * Parameter Headers", SEP-2243): a tool may mark properties of its `inputSchema` with
 * `x-mcp-header: <Name>`, and a call then carries `Mcp-Param-<Name>: <value of that argument>`,
 * which the server checks against the body (a missing or different one is refused, 400 / -32020,
 * before the tool runs). A 2025 client knows nothing of this, so the bridge learns each tool's
 * declarations from the tools/list answers it relays and adds the headers itself.
 *
 * Only properties reached through a chain of `properties` keys count (the spec forbids the
 * annotation anywhere else; a tool that breaks that rule is the upstream's to refuse). Bounded:
 * MAX_TOOLS tools with declarations per connection, the oldest forgotten first.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import { headerValueOf } from '../jsonrpc/modern.ts';
import type { JsonObject } from '../jsonrpc/types.ts';

export const MAX_TOOLS = 1_024;
/** Deepest `properties` chain followed; deeper annotations are ignored (no header sent). */
const MAX_DEPTH = 16;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export interface ParamDeclaration {
  /** Property names from the arguments object down to the value. */
  readonly path: readonly string[];
  /** Header name, lower-cased, with its `mcp-param-` prefix. */
  readonly header: string;
}

/** The declarations of one tool's `inputSchema`, in schema order. */
export function paramDeclarations(inputSchema: unknown): ParamDeclaration[] {
  const out: ParamDeclaration[] = [];
  const visit = (node: unknown, path: string[]) => {
    if (!isObject(node) || path.length > MAX_DEPTH) return;
    const name = node['x-mcp-header'];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name)) out.push({ path, header: `mcp-param-${name.toLowerCase()}` });
    if (isObject(node.properties)) for (const [key, child] of Object.entries(node.properties)) visit(child, [...path, key]);
  };
  visit(inputSchema, []);
  return out;
}

/** A primitive argument as a header value; undefined (no header) for null, absent or non-primitive. */
function valueText(value: unknown): string | undefined {
  if (typeof value === 'string') return headerValueOf(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/** The headers for one call's `arguments`; undefined when none applies. */
export function paramHeaders(declarations: readonly ParamDeclaration[], args: unknown): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const { path, header } of declarations) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    const text = valueText(value);
    if (text !== undefined) (out ??= {})[header] = text;
  }
  return out;
}

/** What one bridged connection knows of its upstream's tools' declarations. */
export interface ParamTable {
  /** Learns from a tools/list result (one page). */
  learn(result: JsonObject): void;
  /** The headers for a tools/call's params; undefined when the tool declares none (or is unknown). */
  headersFor(params: JsonObject | undefined): Record<string, string> | undefined;
  /** True when the tool's declarations are known to be different from `before` (a retry would differ). */
  changed(tool: string, before: readonly ParamDeclaration[] | undefined): boolean;
  /** The tool's declarations as known now. */
  get(tool: string): readonly ParamDeclaration[] | undefined;
}

export function createParamTable(): ParamTable {
  const tools = new Map<string, ParamDeclaration[]>();
  return {
    learn(result) {
      if (!Array.isArray(result.tools)) return;
      for (const tool of result.tools) {
        if (!isObject(tool) || typeof tool.name !== 'string') continue;
        const declarations = paramDeclarations(tool.inputSchema);
        tools.delete(tool.name);
        if (declarations.length === 0) continue;
        tools.set(tool.name, declarations);
        if (tools.size > MAX_TOOLS) tools.delete(tools.keys().next().value as string);
      }
    },
    headersFor(params) {
      const name = params?.name;
      const declarations = typeof name === 'string' ? tools.get(name) : undefined;
      return declarations === undefined ? undefined : paramHeaders(declarations, params?.arguments);
    },
    changed(tool, before) {
      return JSON.stringify(tools.get(tool) ?? []) !== JSON.stringify(before ?? []);
    },
    get: (tool) => tools.get(tool),
  };
}
