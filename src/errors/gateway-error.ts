/**
 * GatewayError: a failure raised on purpose, carrying its GW_* code and the public details that go
 * into `error.data`. Everything else that reaches an error boundary is masked by `toGatewayError`.
 */
import { randomUUID } from 'node:crypto';
import type { JsonRpcErrorObject, JsonRpcErrorResponse, RequestId } from '../jsonrpc/types.ts';
import { catalog, type GatewayErrorCode } from './catalog.ts';

/** Public details; they reach the downstream in `error.data`, so never put secrets here. */
export interface GatewayErrorDetails {
  target?: string;
  reason?: string;
  [key: string]: unknown;
}

export interface GatewayErrorOptions {
  cause?: unknown;
  /**
   * What only the log may see: third-party text (an upstream's error message, a command line, an
   * OS error's text). Never serialised into `error.data`.
   */
  internal?: Record<string, unknown>;
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly details: GatewayErrorDetails;
  readonly internal: Record<string, unknown> | undefined;

  constructor(code: GatewayErrorCode, message?: string, details: GatewayErrorDetails = {}, options?: GatewayErrorOptions) {
    super(message ?? catalog[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.details = details;
    this.internal = options?.internal;
  }

  /** The HTTP status this error maps to when it answers an HTTP request by itself. */
  get httpStatus(): number {
    return catalog[this.code].http;
  }

  /** The JSON-RPC error object: code from the catalog, GW_* name and details in `data`. */
  toJsonRpc(): JsonRpcErrorObject {
    const entry = catalog[this.code];
    return {
      code: entry.jsonrpc,
      message: entry.expose ? this.message : entry.message,
      data: { code: this.code, ...this.details },
    };
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

/**
 * Anything thrown that is not a GatewayError becomes GW_INTERNAL with a fresh correlation id; the
 * caller logs the original under that id so an operator can find it, and the downstream sees only
 * "Internal error".
 */
export function toGatewayError(value: unknown): GatewayError {
  if (value instanceof GatewayError) return value;
  return new GatewayError('GW_INTERNAL', undefined, { correlationId: randomUUID() }, { cause: value });
}

/**
 * Public details of an upstream failure whose specifics stay in the log: the target and a fresh
 * correlation id, which the caller logs next to the private details so an operator can match the
 * client's report to the log line.
 */
export function correlated(target: string, extra: GatewayErrorDetails = {}): GatewayErrorDetails {
  return { target, ...extra, correlationId: randomUUID() };
}

/** A complete error response envelope. */
export function toErrorResponse(id: RequestId | null, error: GatewayError): JsonRpcErrorResponse {
  return { jsonrpc: '2.0', id, error: error.toJsonRpc() };
}
