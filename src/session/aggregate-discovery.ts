/**
 * Progressive discovery on an aggregate endpoint (`discovery: { mode: search }`): `tools/list`
 * answers three meta-tools and the operator's always-visible tools instead of the whole catalog.
 *
 * - `search_tools {query, limit?}` ranks the caller's own catalog (router/tool-search.ts): the
 *   merged tools/list exactly as this caller would get it (filters, policy, overrides, virtual
 *   picks, pinning's withholding applied by aggregate-lists.ts), so it never names a tool the caller
 *   could not list. Each hit carries its name, title, description and input schema: enough to call.
 * - `describe_tool {name}` answers one tool of that catalog, whole.
 * - `call_tool {name, arguments}` is unwrapped into the call it names before the session records
 *   the request (requests.ts), so the call takes the normal path: routing, the chain's judgments
 *   (entrance, step-up, limits, pinning, hooks), and an audit line naming the real tool.
 *
 * The catalog is read again once a member's tool list changed (the name table's generation moves
 * on every `list_changed`, exit and reload); a catalog some member was missing from is not kept.
 * Nothing here holds state across requests but that cache, so a 2026 request (served on a held
 * session) and a 2025 session behave the same.
 */
import { isObject } from '../jsonrpc/envelope.ts';
import type { JsonObject, JsonRpcRequest } from '../jsonrpc/types.ts';
import type { DiscoveryConfig } from '../config/types.ts';
import { compileGlobs } from '../router/glob.ts';
import { createToolIndex, type ToolIndex } from '../router/tool-search.ts';
import { listPage, META_UNAVAILABLE, type ListContext } from './aggregate-lists.ts';

export const SEARCH_TOOL = 'search_tools';
export const DESCRIBE_TOOL = 'describe_tool';
export const CALL_TOOL = 'call_tool';
const MAX_PAGES = 100;
/** A hit's description is cut here: describe_tool gives the whole tool. */
const HIT_DESCRIPTION_CHARS = 600;

const META_TOOLS: readonly JsonObject[] = Object.freeze([
  {
    name: SEARCH_TOOL,
    title: 'Search tools',
    description:
      'Search the tools available here by what you want to do (a few keywords: the action and the object, e.g. "create github issue" or "read file"). Returns the best matching tools with their input schemas; call one with call_tool, or directly by its name.',
    inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'What you want to do, in a few keywords' }, limit: { type: 'integer', minimum: 1, description: 'How many tools to return at most' } }, required: ['query'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: DESCRIBE_TOOL,
    title: 'Describe a tool',
    description: 'The full definition of one tool found by search_tools: its description, input schema and annotations.',
    inputSchema: { type: 'object', properties: { name: { type: 'string', description: 'The tool name as search_tools returned it' } }, required: ['name'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: 'Call a tool found by search_tools, by its name, with arguments matching its input schema.',
    inputSchema: { type: 'object', properties: { name: { type: 'string', description: 'The tool name as search_tools returned it' }, arguments: { type: 'object', description: 'The arguments of the tool' } }, required: ['name'] },
  },
]);

export interface Discovery {
  /** The discovery `tools/list` answer (meta-tools and always-visible tools). */
  list(): Promise<JsonObject>;
  /** The answer to a call of `search_tools` or `describe_tool`; undefined for any other tool. */
  call(request: JsonRpcRequest): Promise<JsonObject> | undefined;
  /** `call_tool {name, arguments}` becomes `tools/call {name, arguments}`, in place. */
  unwrap(request: JsonRpcRequest): void;
}

interface Catalog {
  readonly tools: JsonObject[];
  readonly index: ToolIndex;
  readonly unavailable: unknown[];
}

const text = (value: unknown): JsonObject => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: isObject(value) ? value : { value } });
const toolError = (message: string): JsonObject => ({ content: [{ type: 'text', text: message }], isError: true });

/** `settings()`: the endpoint's discovery now (it follows reloads); undefined: off. */
export function createDiscovery(ctx: ListContext, settings: () => DiscoveryConfig | undefined): Discovery {
  let cached: { generation: number; catalog: Catalog } | undefined;

  const catalog = async (): Promise<Catalog> => {
    const generation = ctx.tables.tools.generation;
    if (cached !== undefined && cached.generation === generation) return cached.catalog;
    const tools: JsonObject[] = [];
    const unavailable: unknown[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await listPage(ctx, 'tools/list', cursor === undefined ? {} : { cursor });
      if (Array.isArray(page.tools)) for (const tool of page.tools) if (isObject(tool)) tools.push(tool);
      const missing = isObject(page._meta) ? page._meta[META_UNAVAILABLE] : undefined;
      if (Array.isArray(missing)) unavailable.push(...missing);
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    const built: Catalog = { tools, index: createToolIndex(tools), unavailable };
    // A member left out (slow, failing) is not missing for long: such a catalog is not kept.
    cached = unavailable.length === 0 && ctx.tables.tools.generation === generation ? { generation, catalog: built } : undefined;
    return built;
  };

  const search = async (args: JsonObject): Promise<JsonObject> => {
    const query = args.query;
    if (typeof query !== 'string' || query.trim() === '') return toolError('query must be a non-empty string');
    const max = settings()?.maxResults ?? 8;
    const asked = typeof args.limit === 'number' && Number.isInteger(args.limit) && args.limit > 0 ? Math.min(args.limit, max) : max;
    const { index } = await catalog();
    const hits = index.search(query, asked).map(({ tool, score }) => {
      const description = typeof tool.description === 'string' && tool.description.length > HIT_DESCRIPTION_CHARS ? `${tool.description.slice(0, HIT_DESCRIPTION_CHARS)}…` : tool.description;
      return { name: tool.name, ...(tool.title !== undefined ? { title: tool.title } : {}), description, inputSchema: tool.inputSchema, score: Math.round(score * 1000) / 1000 };
    });
    return text({ tools: hits });
  };

  const describe = async (args: JsonObject): Promise<JsonObject> => {
    const name = args.name;
    const found = typeof name === 'string' ? (await catalog()).tools.find((t) => t.name === name) : undefined;
    // A tool the caller cannot list is as unknown as one nobody has.
    return found === undefined ? toolError(`Unknown tool: ${String(name)}`) : text(found);
  };

  return {
    async list() {
      const on = settings();
      const visible = compileGlobs(on?.alwaysVisible ?? []);
      const { tools, unavailable } = await catalog();
      const result: JsonObject = { tools: [...META_TOOLS.map((t) => structuredClone(t)), ...(visible === undefined ? [] : tools.filter((t) => visible.test(String(t.name))))] };
      if (unavailable.length > 0) result._meta = { [META_UNAVAILABLE]: unavailable };
      return result;
    },
    call(request) {
      const name = request.params?.name;
      const args = isObject(request.params?.arguments) ? request.params.arguments : {};
      if (name === SEARCH_TOOL) return search(args);
      if (name === DESCRIBE_TOOL) return describe(args);
      if (name === CALL_TOOL) return Promise.resolve(toolError('call_tool needs the name of a tool (a string) and its arguments (an object)'));
      return undefined;
    },
    unwrap(request) {
      const params = request.params;
      if (request.method !== 'tools/call' || params?.name !== CALL_TOOL || settings() === undefined) return;
      const inner = isObject(params.arguments) ? params.arguments : undefined;
      if (inner === undefined || typeof inner.name !== 'string' || (inner.arguments !== undefined && !isObject(inner.arguments))) return;
      params.name = inner.name;
      params.arguments = inner.arguments ?? {};
    },
  };
}
