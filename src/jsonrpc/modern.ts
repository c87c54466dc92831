/**
 * Vocabulary of the stateless 2026-07-28 revision that the wire needs: the revision string, the
 * reserved `_meta` keys of the per-request envelope, and the HTTP header values a request carries
 * (MCP 2026-07-28 basic/transports, "Request Headers"; the `=?base64?...?=` form of SEP-2243), as
 * the gateway sends them upstream. The inbound side (classifying, decoding) is era.ts.
 */
import { isObject } from './envelope.ts';
import { META } from './era.ts';
import type { JsonObject, JsonRpcRequest } from './types.ts';

/** The stateless revision. An upstream is modern only if its `server/discover` lists exactly this. */
export { MODERN_PROTOCOL_VERSION } from './era.ts';

/** Reserved `_meta` keys of the per-request envelope (schema/2026-07-28; one list, in era.ts). */
export const META_PROTOCOL_VERSION = META.protocolVersion;
export const META_CLIENT_CAPABILITIES = META.clientCapabilities;
export const META_CLIENT_INFO = META.clientInfo;
export const META_LOG_LEVEL = META.logLevel;
/** On results: who answered (moved out of the discover result into `_meta`). */
export const META_SERVER_INFO = META.serverInfo;
export const META_SUBSCRIPTION_ID = META.subscriptionId;
/** Every reserved key starts so; a hop strips the ones it received and sets its own. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';
/**
 * Ours, on a server->client request the gateway makes of a 2026 upstream's input request: the
 * upstream's name for it, so a 2026 client behind the gateway is asked under that same name.
 */
export const META_INPUT_KEY = 'dev.switchboard/inputKey';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';

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

/** What `Mcp-Name` carries for the methods that have one: the tool or prompt name, the resource URI. */
export function mcpNameOf(request: JsonRpcRequest): string | undefined {
  const params = request.params;
  if (!isObject(params)) return undefined;
  if (request.method === 'tools/call' || request.method === 'prompts/get') return typeof params.name === 'string' ? params.name : undefined;
  if (request.method === 'resources/read') return typeof params.uri === 'string' ? params.uri : undefined;
  return undefined;
}

/** `_meta` without the reserved envelope keys a previous hop set (the next hop sets its own). */
export function withoutReservedMeta(meta: unknown): JsonObject {
  const out: JsonObject = {};
  if (!isObject(meta)) return out;
  for (const [key, value] of Object.entries(meta)) if (!key.startsWith(RESERVED_META_PREFIX)) out[key] = value;
  return out;
}
