/**
 * Vocabulary of the stateless 2026-07-28 revision that the wire needs, both ways: the reserved
 * `_meta` keys of the per-request envelope, stripping them, the HTTP header values a request carries
 * (MCP 2026-07-28 basic/transports, "Request Headers"), and the one codec of the `=?base64?...?=`
 * form of SEP-2243 (`Mcp-Name`, `Mcp-Param-*`). Classifying an inbound request is era.ts; the
 * revisions are versions.ts, what each method names is methods.ts.
 */
import { isObject } from './envelope.ts';
import { mcpNameField } from './methods.ts';
import type { JsonObject, JsonRpcRequest } from './types.ts';

/** Reserved `_meta` keys of the 2026 envelope and of its results and notifications (schema/2026-07-28). */
export const META = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** On results: who answered (moved out of the discover result into `_meta`). */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
});
/** Every reserved key starts so; a hop strips the ones it received and sets its own. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';
/**
 * Ours, on a server->client request the gateway makes of a 2026 upstream's input request: the
 * upstream's name for it, so a 2026 client behind the gateway is asked under that same name.
 */
export const META_INPUT_KEY = 'dev.switchboard/inputKey';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A string as an HTTP field value: as it is when it is plain printable ASCII without edge
 * whitespace (RFC 9110 5.5), else `=?base64?<base64 of its UTF-8>?=`. A value that already looks
 * like the sentinel form is encoded too, so it cannot be misread.
 */
export function headerValueOf(value: string): string {
  let plain = value.length > 0 && value === value.trim() && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    plain = c === 9 || (c >= 0x20 && c <= 0x7e);
  }
  return plain ? value : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** A header value as sent (`Mcp-Name`, `Mcp-Param-*`): plain, or `=?base64?<utf-8 as base64>?=`; undefined if invalid. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  const bytes = Buffer.from(b64, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return text.includes('\uFFFD') ? undefined : text;
}

/** What `Mcp-Name` carries for the methods that have one: the tool or prompt name, the resource URI. */
export function mcpNameOf(request: JsonRpcRequest): string | undefined {
  const field = mcpNameField(request.method);
  const value = field === undefined || !isObject(request.params) ? undefined : request.params[field];
  return typeof value === 'string' ? value : undefined;
}

/** `_meta` without the reserved envelope keys a previous hop set (the next hop sets its own). */
export function withoutReservedMeta(meta: unknown): JsonObject {
  const out: JsonObject = {};
  if (!isObject(meta)) return out;
  for (const [key, value] of Object.entries(meta)) if (!key.startsWith(RESERVED_META_PREFIX)) out[key] = value;
  return out;
}

/**
 * A copy of `params` for a 2025 upstream: the 2026 envelope keys leave `_meta` (progressToken
 * stays), and the keys in `drop` leave `params`. Built in one pass without `delete`, which would
 * turn the copy into a slow dictionary object for the serialization that follows.
 */
export function withoutEnvelope(params: JsonObject | undefined, drop?: ReadonlySet<string>): JsonObject | undefined {
  const meta = isObject(params?._meta) ? (params._meta as JsonObject) : undefined;
  if (params === undefined || (meta === undefined && drop === undefined)) return params;
  const copy: JsonObject = {};
  for (const key of Object.keys(params)) {
    if (drop?.has(key) === true) continue;
    let value = params[key];
    if (key === '_meta' && meta !== undefined) {
      const kept: JsonObject = {};
      let any = false;
      for (const k of Object.keys(meta)) {
        if (k.startsWith(RESERVED_META_PREFIX)) continue;
        Object.defineProperty(kept, k, { value: meta[k], enumerable: true, writable: true, configurable: true });
        any = true;
      }
      if (!any) continue;
      value = kept;
    }
    // A peer's `__proto__` key is data, never the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    else copy[key] = value as JsonObject[string];
  }
  return copy;
}

const CLIENT_ANSWERS = Symbol('switchboard.inputResponses');
type Carrying = { [CLIENT_ANSWERS]?: JsonObject };

/**
 * A 2026 client's own `inputResponses` on a fresh request (no `requestState`): answers to input
 * requests of the upstream the gateway never saw. They belong to a 2026 upstream, which judges
 * them; a 2025 upstream has no such thing. So they ride beside the params under a symbol key:
 * JSON serialisation never writes it (every 2025 wire drops them by construction), a copy of the
 * request made by spreading keeps it, and only the 2026 bridge reads it (`carriedInputResponses`).
 */
export function carryInputResponses(request: JsonRpcRequest, answers: JsonObject): void {
  (request as Carrying)[CLIENT_ANSWERS] = answers;
}

/** What `carryInputResponses` put beside `request`, if anything. */
export function carriedInputResponses(request: JsonRpcRequest): JsonObject | undefined {
  return (request as Carrying)[CLIENT_ANSWERS];
}
