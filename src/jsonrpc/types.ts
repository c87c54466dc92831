/**
 * JSON-RPC 2.0 message shapes as the gateway sees them.
 *
 * Loose on purpose: peers may add fields we do not know, and a gateway must pass them through
 * untouched. Only the envelope (jsonrpc, id, method, result/error) is checked, by the guards in
 * `envelope.ts`; params and results stay `unknown`-ish records.
 */

/**
 * A request id. JSON-RPC allows string or number; MCP forbids null. An id whose numeric text cannot
 * survive a round trip through a double (e.g. 12345678901234567890) is kept as a `RawJsonId` (the
 * value `JSON.rawJSON` returns) so that it is written back exactly as the peer sent it.
 */
export type RequestId = string | number | RawJsonId;

/** Opaque wrapper produced by `JSON.rawJSON`; serialises to its exact source text. */
export interface RawJsonId {
  readonly rawJSON: string;
}

export type JsonObject = Record<string, unknown>;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: JsonObject;
  [extra: string]: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
  [extra: string]: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: RequestId;
  result: JsonObject;
  [extra: string]: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JsonRpcErrorObject;
  [extra: string]: unknown;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcErrorResponse;

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** `params._meta` as MCP defines it: progress tokens and vendor keys live here. */
export interface RequestMeta {
  progressToken?: RequestId;
  [key: string]: unknown;
}
