/**
 * A classified 2026 request as the http layer hands it over (serve.ts), and the caller a host is
 * acquired for (hosts.ts, keyed in host-keys.ts) as its envelope declares it.
 */
import { isObject } from '../../jsonrpc/envelope.ts';
import { META } from '../../jsonrpc/era.ts';
import type { JsonObject, JsonRpcRequest } from '../../jsonrpc/types.ts';
import type { Principal } from '../../upstream/caller.ts';
import type { RouteEndpoint } from '../endpoint-table.ts';
import type { Exchange } from './exchange.ts';
import { askingCapabilities, type HostCaller } from './host-keys.ts';

/** One classified 2026 request and what the http layer knows of its caller. */
export interface StatelessRequest {
  readonly endpoint: RouteEndpoint;
  readonly request: JsonRpcRequest;
  readonly meta: JsonObject;
  readonly principal: Principal | undefined;
  readonly authorization: string | undefined;
  /** The HTTP request's headers: the client's W3C trace context (`traceparent`) is read from them. */
  readonly headers: Readonly<Record<string, unknown>>;
  readonly exchange: Exchange;
  /** Step-up over HTTP: the `WWW-Authenticate` of a 403 for `missing` scopes (relay.ts); undefined: a JSON-RPC error. */
  readonly challenge?: ((missing: readonly string[]) => string) | undefined;
}

/** Who asks, and what it declared in its envelope, for a host. */
export function callerOf(input: StatelessRequest): HostCaller {
  const info = input.meta[META.clientInfo];
  const capabilities = input.meta[META.clientCapabilities] as JsonObject;
  return {
    endpoint: input.endpoint,
    principal: input.principal,
    authorization: input.authorization,
    capabilities,
    asking: askingCapabilities(capabilities),
    clientInfo: isObject(info) ? info : undefined,
  };
}
