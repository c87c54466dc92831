/**
 * The GW_* error catalog: every failure the gateway reports on purpose.
 *
 * Each entry fixes the JSON-RPC code, the HTTP status used when the error answers an HTTP request
 * on its own (errors tied to a forwarded request go out as 200 with the envelope, see
 * docs/errors.md), the default message, and whether the message of a specific occurrence may be
 * shown to the downstream (`expose: false` masks it as "Internal error").
 *
 * docs/errors.md lists exactly these codes; test/unit/errors/catalog.test.ts checks both ways.
 */
import { JsonRpcCode } from '../jsonrpc/codes.ts';

export interface CatalogEntry {
  readonly jsonrpc: number;
  readonly http: number;
  readonly message: string;
  readonly expose: boolean;
}

const entry = (jsonrpc: number, http: number, message: string, expose = true): CatalogEntry =>
  Object.freeze({ jsonrpc, http, message, expose });

export const catalog = Object.freeze({
  // Downstream input (the client's fault). Answered with id null when the request id is unknown.
  GW_PARSE_ERROR: entry(JsonRpcCode.ParseError, 400, 'Parse error'),
  GW_INVALID_REQUEST: entry(JsonRpcCode.InvalidRequest, 400, 'Invalid Request'),
  GW_BATCH_NOT_ALLOWED: entry(JsonRpcCode.InvalidRequest, 400, 'Batches are not allowed in this protocol version'),
  GW_BODY_TOO_LARGE: entry(JsonRpcCode.InvalidRequest, 413, 'Request body too large'),
  GW_NOT_ACCEPTABLE: entry(JsonRpcCode.InvalidRequest, 406, 'Not Acceptable'),
  GW_UNSUPPORTED_MEDIA_TYPE: entry(JsonRpcCode.InvalidRequest, 415, 'Unsupported Media Type'),
  GW_METHOD_NOT_ALLOWED: entry(JsonRpcCode.InvalidRequest, 405, 'Method Not Allowed'),
  GW_UNSUPPORTED_PROTOCOL_VERSION: entry(JsonRpcCode.InvalidRequest, 400, 'Unsupported protocol version'),
  GW_FORBIDDEN_ORIGIN: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: Origin not allowed'),
  GW_FORBIDDEN_HOST: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: Host not allowed'),
  GW_UNAUTHORIZED: entry(JsonRpcCode.InvalidRequest, 401, 'Unauthorized: a valid bearer token or API key is required'),
  GW_INSUFFICIENT_SCOPE: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: the token lacks a required scope'),
  // SEP-2350 step-up: a call whose item (mcpServers.<name>.requiredScopes) needs scopes the token lacks.
  GW_STEP_UP_REQUIRED: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: this call needs scopes the token lacks; re-authorize with them'),
  GW_RATE_LIMITED: entry(JsonRpcCode.InvalidRequest, 429, 'Too Many Requests: slow down and retry after the time given'),
  GW_ROUTE_NOT_FOUND: entry(JsonRpcCode.InvalidRequest, 404, 'Not Found'),
  GW_REQUEST_REFUSED: entry(JsonRpcCode.InvalidRequest, 400, 'Request refused by the HTTP parser'),
  GW_CSRF_REFUSED: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: a change from the console needs its CSRF token and the gateway\'s own Origin'),
  GW_HOP_REFUSED: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: replica hop not verified'),
  GW_UPGRADE_REQUIRED: entry(JsonRpcCode.InvalidRequest, 426, 'Upgrade Required: this endpoint speaks WebSocket'),
  GW_WEBSOCKET_NOT_SERVED: entry(JsonRpcCode.InvalidRequest, 400, 'Bad Request: WebSocket is not served at this path; it is served at /ws, /servers/<name>/ws, /groups/<name>/ws and /virtual/<name>/ws'),

  // Sessions (2025 era).
  GW_SESSION_REQUIRED: entry(JsonRpcCode.InvalidRequest, 400, 'Bad Request: Mcp-Session-Id header is required'),
  GW_SESSION_NOT_FOUND: entry(JsonRpcCode.InvalidRequest, 404, 'Session not found'),
  GW_ALREADY_INITIALIZED: entry(JsonRpcCode.InvalidRequest, 400, 'Session is already initialized'),
  GW_SESSION_LIMIT: entry(JsonRpcCode.InternalError, 503, 'Too many sessions; try again later'),
  GW_STREAM_CONFLICT: entry(JsonRpcCode.InvalidRequest, 409, 'Conflict: a standalone SSE stream is already open for this session'),
  GW_SHUTTING_DOWN: entry(JsonRpcCode.InternalError, 503, 'Gateway is shutting down'),
  GW_TOO_MANY_STREAMS: entry(JsonRpcCode.InternalError, 503, 'Too many status streams open; try again later'),
  GW_OVERLOADED: entry(JsonRpcCode.InternalError, 503, 'Too many requests in flight; retry after the time given'),
  GW_RATE_LIMIT_UNAVAILABLE: entry(JsonRpcCode.InternalError, 503, 'Rate limits cannot be checked now; retry after the time given'),

  // The stateless 2026-07-28 revision (SEP-2575, SEP-2243, SEP-2322).
  GW_INVALID_ENVELOPE: entry(JsonRpcCode.InvalidParams, 400, 'Invalid params: the request lacks a valid 2026-07-28 _meta envelope'),
  GW_HEADER_MISMATCH: entry(JsonRpcCode.HeaderMismatch, 400, 'Bad Request: the request headers and body disagree'),
  GW_PROTOCOL_VERSION_NOT_SUPPORTED: entry(JsonRpcCode.UnsupportedProtocolVersion, 400, 'Unsupported protocol version'),
  GW_INVALID_REQUEST_STATE: entry(JsonRpcCode.InvalidParams, 400, 'Invalid params: requestState is not valid here'),

  // Upstream failures, tied to a forwarded request (HTTP 200, JSON-RPC error).
  GW_UPSTREAM_SPAWN_FAILED: entry(JsonRpcCode.InternalError, 502, 'Upstream server could not be started'),
  GW_UPSTREAM_EXITED: entry(JsonRpcCode.InternalError, 502, 'Upstream server exited'),
  GW_UPSTREAM_CLOSED: entry(JsonRpcCode.InternalError, 502, 'Upstream connection closed'),
  GW_UPSTREAM_TIMEOUT: entry(JsonRpcCode.InternalError, 504, 'Upstream request timed out'),
  GW_UPSTREAM_MESSAGE_TOO_LARGE: entry(JsonRpcCode.InternalError, 502, 'Upstream message exceeds the size limit'),
  GW_UPSTREAM_MESSAGE_TOO_DEEP: entry(JsonRpcCode.InternalError, 502, 'Upstream message is nested too deeply'),
  GW_UPSTREAM_BUSY: entry(JsonRpcCode.InternalError, 503, 'Upstream server is not reading its input'),
  GW_UPSTREAM_UNREACHABLE: entry(JsonRpcCode.InternalError, 502, 'Upstream server could not be reached'),
  GW_UPSTREAM_HTTP_ERROR: entry(JsonRpcCode.InternalError, 502, 'Upstream server answered with an HTTP error'),
  GW_UPSTREAM_SESSION_EXPIRED: entry(JsonRpcCode.InternalError, 502, 'Upstream session expired'),
  // Each user's own upstream account (mcpServers.<name>.oauth): -32042 is MCP 2025-11-25's
  // URLElicitationRequiredError, so a client that takes URL elicitation shows `data.elicitations`.
  GW_UPSTREAM_AUTH_REQUIRED: entry(JsonRpcCode.UrlElicitationRequired, 403, 'Connect your account at this upstream first: open the URL given'),
  GW_UPSTREAM_AUTH_FAILED: entry(JsonRpcCode.InternalError, 502, 'Connecting an account at the upstream failed'),
  GW_TOKEN_EXCHANGE_FAILED: entry(JsonRpcCode.InternalError, 502, 'Token exchange for the upstream failed'),
  GW_CREDENTIAL_NOT_EXCHANGEABLE: entry(JsonRpcCode.InvalidRequest, 403, 'Forbidden: this server needs a token the gateway exchanges, and this credential cannot be exchanged'),
  // A 2026-07-28 upstream behind the bridge (upstream/modern-bridge.ts).
  GW_UPSTREAM_INVALID_ANSWER: entry(JsonRpcCode.InternalError, 502, 'Upstream answer breaks the 2026-07-28 rules'),
  GW_INPUT_ROUNDS_LIMIT: entry(JsonRpcCode.InternalError, 503, 'Too many calls wait for input; answer one, then retry'),
  GW_INPUT_REQUEST_FAILED: entry(JsonRpcCode.InternalError, 502, 'The client could not answer an input request of the upstream'),
  GW_REQUEST_CANCELLED: entry(JsonRpcCode.InternalError, 200, 'Request cancelled'),
  GW_DOWNSTREAM_UNAVAILABLE: entry(JsonRpcCode.InternalError, 200, 'No downstream stream could take this server-to-client request'),
  GW_SERVER_REQUEST_UNATTRIBUTABLE: entry(
    JsonRpcCode.InternalError,
    200,
    'A server-to-client request on a shared upstream cannot be attributed to one session',
  ),

  // Aggregate endpoints (several targets behind one URL).
  GW_TARGET_UNAVAILABLE: entry(JsonRpcCode.InternalError, 502, 'Target is not available in this session'),
  GW_CIRCUIT_OPEN: entry(JsonRpcCode.InternalError, 503, 'Target is failing; the gateway is not trying it until its cooldown ends'),
  GW_UNKNOWN_TOOL: entry(JsonRpcCode.InvalidParams, 400, 'Unknown tool'),
  GW_UNKNOWN_PROMPT: entry(JsonRpcCode.InvalidParams, 400, 'Unknown prompt'),
  // A task this session did not create (session/chain/tasks.ts).
  GW_UNKNOWN_TASK: entry(JsonRpcCode.InvalidParams, 400, 'Unknown task'),
  // SEP-2164: resource not found is -32602 (Invalid params), not the older -32002 (server-error range).
  GW_RESOURCE_NOT_FOUND: entry(JsonRpcCode.InvalidParams, 404, 'Resource not found'),
  // Pinning (docs/governance.md): the item exists, but its definition is not the one approved.
  GW_DEFINITION_CHANGED: entry(JsonRpcCode.InvalidParams, 409, 'Definition changed since it was approved; refused until an operator approves it'),
  GW_INVALID_CURSOR: entry(JsonRpcCode.InvalidParams, 400, 'Invalid cursor'),
  GW_INVALID_PARAMS: entry(JsonRpcCode.InvalidParams, 400, 'Invalid params'),
  // A resource URI with no spelling safe to judge (router/canonical.ts; docs/security.md).
  GW_INVALID_URI: entry(JsonRpcCode.InvalidParams, 400, 'Invalid params: the resource URI has no canonical spelling'),
  GW_METHOD_NOT_FOUND: entry(JsonRpcCode.MethodNotFound, 404, 'Method not found'),

  // Guardrail hooks of a target (mcpServers.<name>.hooks; docs/governance.md, "Guardrail hooks").
  GW_HOOK_DENIED: entry(JsonRpcCode.InvalidRequest, 403, 'Denied by a gateway hook'),
  GW_HOOK_FAILED: entry(JsonRpcCode.InternalError, 502, 'A gateway hook could not judge this message, and it is refused while the hook fails'),

  // Anything not raised on purpose.
  GW_INTERNAL: entry(JsonRpcCode.InternalError, 500, 'Internal error', false),
} satisfies Record<string, CatalogEntry>);

export type GatewayErrorCode = keyof typeof catalog;

export function isGatewayErrorCode(value: string): value is GatewayErrorCode {
  return Object.hasOwn(catalog, value);
}
