/**
 * One 2026-07-28 HTTP exchange as the stateless layer sees it: a POST's response, written once as
 * JSON or as an SSE stream. The http layer implements it over a raw response (http/exchange.ts);
 * nothing here knows HTTP beyond a status code.
 */
import { JsonRpcCode } from '../../jsonrpc/codes.ts';

export interface Exchange {
  /** Answers with one JSON body (only before `sse()`); `headers` such as Retry-After. */
  json(status: number, body: string, headers?: Record<string, string>): void;
  /** Starts an SSE response. */
  sse(): void;
  /** One SSE event without an id (a 2026 stream cannot be resumed). */
  event(data: string): void;
  /** Ends the response. */
  end(): void;
  /** True once the response ended or the client went away. */
  readonly closed: boolean;
  /** Called once when the client goes away before the response ended. */
  onclose: (() => void) | undefined;
}

/**
 * The HTTP status a 2026 error answer carries when it is the whole response: the spec puts the
 * ladder's errors on 400 (-32020 header mismatch, -32021 missing capability, -32022 version) and a
 * missing method on 404; everything else from handling a request is 200 with the error inside.
 */
export function statusOfError(code: unknown): number {
  if (code === JsonRpcCode.MethodNotFound) return 404;
  if (code === JsonRpcCode.HeaderMismatch || code === JsonRpcCode.MissingClientCapability || code === JsonRpcCode.UnsupportedProtocolVersion) return 400;
  return 200;
}
