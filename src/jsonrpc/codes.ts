/**
 * The one JSON-RPC error code table. Every numeric code the gateway emits is named here.
 *
 * -32700..-32600 are JSON-RPC 2.0's own. -32002 and -32042 are MCP's (2025 era). -32020..-32099 is
 * reserved for the MCP spec: the gateway never invents codes there, and it avoids -32000..-32019 for
 * meanings of its own: gateway failures travel as -32603 with the GW_* name in `error.data.code`.
 */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP 2025: resources/read of an unknown URI. */
  ResourceNotFound: -32002,
  /** MCP 2025-11-25: URL-mode elicitation required. */
  UrlElicitationRequired: -32042,
  /** MCP 2026-07-28: a header does not match the body. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: a required client capability is missing. */
  MissingClientCapability: -32021,
  /** MCP 2026-07-28: unsupported protocol version (data.supported lists ours). */
  UnsupportedProtocolVersion: -32022,
} as const;

export type JsonRpcCodeValue = (typeof JsonRpcCode)[keyof typeof JsonRpcCode];
