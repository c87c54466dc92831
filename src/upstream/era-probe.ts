/**
 * Which era a remote Streamable HTTP target speaks (`protocol: auto`), found by asking before
 * anything else: a `server/discover` probe (MCP 2026-07-28 basic/lifecycle, "Discovery"). The rule
 * (docs/eras.md):
 *
 * - modern (2026) if the answer is a result whose `supportedVersions` lists exactly 2026-07-28: a
 *   server that lists it must serve it. A -32022 "unsupported protocol version" refusal whose
 *   `data.supported` names a revision the gateway speaks in the 2026 era says the same (a 2026
 *   server may refuse a first request so): the discover is sent once more, at that revision, and
 *   its answer decides; a second refusal still says 2026 (the connection fails, never 2025);
 * - 2025 when the server answered as an MCP server without listing it: a JSON-RPC error (a 2025
 *   server does not know the method or wants a session), a result without the version, or an HTTP
 *   4xx other than 401, 403, 408 and 429 (2025 servers refuse a session-less request that way);
 * - inconclusive otherwise: 401/403 (credentials, not the era), 408/429 and 5xx (a passing
 *   condition), a network failure, a timeout, a body that is not JSON-RPC. The connection then
 *   goes on as 2025 (the era every Streamable HTTP server had before 2026) and nothing is
 *   remembered, so the next session asks again.
 *
 * A conclusive answer is remembered for ERA_MEMORY_TTL_MS per target object (a reload that changes
 * the target asks again) and, where the upstream identity differs per principal (`principalHeaders`,
 * `forwardAuthorization`), per principal. The probe is a discovery request, which changes nothing
 * upstream; no client request is ever sent twice by the probe. Its `_meta` carries the gateway's
 * own clientInfo (a SHOULD of the 2026 envelope).
 */
import type { RemoteTargetConfig } from '../config/types.ts';
import { isErrorResponse, isObject } from '../jsonrpc/envelope.ts';
import { JsonRpcCode } from '../jsonrpc/codes.ts';
import { META } from '../jsonrpc/modern.ts';
import { isServedModernVersion, MODERN_PROTOCOL_VERSION } from '../jsonrpc/versions.ts';
import type { JsonObject, JsonRpcResponse } from '../jsonrpc/types.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';
import { createAbortHandle } from '../transport/http-dispatch.ts';
import type { StatelessHttpWire } from '../transport/stateless-http.ts';
import { GATEWAY_CLIENT_INFO } from './gateway-identity.ts';
import type { Principal } from './caller.ts';

export type Era = '2025' | '2026';

export type ProbeOutcome =
  | { readonly era: '2026'; readonly discovered: JsonObject }
  /** The server names 2026-07-28 (-32022) yet refused the discover at it twice: 2026, unusable now. */
  | { readonly era: '2026'; readonly discovered?: undefined; readonly error: GatewayError }
  | { readonly era: '2025'; readonly conclusive: true; readonly why: string }
  | { readonly era: '2025'; readonly conclusive: false; readonly why: string; readonly error: GatewayError };

/** Principals remembered per target; past it the oldest is forgotten (and probed again). */
export const ERA_MEMORY_PRINCIPALS = 1_024;
/**
 * 10 min: how long an era is remembered. A server can change era behind the same URL (an upgrade
 * to 2026-07-28, a rollback); after this the next session asks again. One probe per target in ten
 * minutes costs nothing worth saving.
 */
export const ERA_MEMORY_TTL_MS = 10 * 60_000;

/** What the gateway learnt of its targets' eras. One per gateway (the upstream factory holds it). */
export interface EraMemory {
  /**
   * `question`: 'era' (what server/discover says) or 'for-2025-clients' (whether a server that lists
   * 2026-07-28 also takes a 2025 client's own initialize: '2025' yes, '2026' no; era-first.ts).
   */
  get(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, question?: EraQuestion): Era | undefined;
  set(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, era: Era, question?: EraQuestion): void;
}

export type EraQuestion = 'era' | 'for-2025-clients';

/** '' when every principal reaches the same upstream identity. */
function principalKey(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined): string {
  const perPrincipal = target.forwardAuthorization || Object.keys(target.principalHeaders).length > 0;
  return perPrincipal ? (principal?.id ?? 'anonymous') : '';
}

function memoryKey(target: RemoteTargetConfig, principal: Pick<Principal, 'id'> | undefined, question: EraQuestion): string {
  return question === 'era' ? principalKey(target, principal) : `${question}:${principalKey(target, principal)}`;
}

export function createEraMemory(ttlMs = ERA_MEMORY_TTL_MS, now: () => number = Date.now): EraMemory {
  const byTarget = new WeakMap<RemoteTargetConfig, Map<string, { era: Era; until: number }>>();
  return {
    get(target, principal, question = 'era') {
      const eras = byTarget.get(target);
      const key = memoryKey(target, principal, question);
      const known = eras?.get(key);
      if (known === undefined || known.until > now()) return known?.era;
      eras!.delete(key);
      return undefined;
    },
    set(target, principal, era, question = 'era') {
      let eras = byTarget.get(target);
      if (eras === undefined) byTarget.set(target, (eras = new Map()));
      const key = memoryKey(target, principal, question);
      eras.delete(key);
      eras.set(key, { era, until: now() + ttlMs });
      if (eras.size > ERA_MEMORY_PRINCIPALS) eras.delete(eras.keys().next().value as string);
    },
  };
}

/** The probe request: a discovery under the modern envelope (required on every 2026 request). */
export function discoverRequest(id: string): { jsonrpc: '2.0'; id: string; method: string; params: JsonObject } {
  return {
    jsonrpc: '2.0',
    id,
    method: 'server/discover',
    params: {
      _meta: { [META.protocolVersion]: MODERN_PROTOCOL_VERSION, [META.clientCapabilities]: {}, [META.clientInfo]: GATEWAY_CLIENT_INFO },
    },
  };
}

/**
 * A -32022 refusal whose `data.supported` names a revision the gateway speaks in the 2026 era: the
 * server is a 2026 one that wants the request (again) at that revision.
 */
export function namesModernRevision(answer: JsonRpcResponse): boolean {
  if (!isErrorResponse(answer) || answer.error.code !== JsonRpcCode.UnsupportedProtocolVersion) return false;
  const data: unknown = answer.error.data;
  const supported = isObject(data) ? data.supported : undefined;
  return Array.isArray(supported) && supported.some(isServedModernVersion);
}

/** HTTP statuses that say nothing about the era. */
const INCONCLUSIVE_STATUS = new Set([401, 403, 408, 429]);

/**
 * `server/discover` within `timeoutMs` (both tries): the answer, or a GatewayError
 * (GW_UPSTREAM_TIMEOUT when it took too long). Refused with -32022 naming a 2026 revision, it is
 * asked once more (the only revision sent is 2026-07-28, so the retry is at the one named).
 */
export async function askDiscover(wire: StatelessHttpWire, target: string, timeoutMs: number): Promise<JsonRpcResponse> {
  const abort = createAbortHandle();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  timer.unref();
  try {
    const first = await wire.post(discoverRequest('switchboard-discover'), () => undefined, abort);
    if (!namesModernRevision(first)) return first;
    return await wire.post(discoverRequest('switchboard-discover-2'), () => undefined, abort);
  } catch (err) {
    if (!abort.aborted) throw err;
    throw new GatewayError('GW_UPSTREAM_TIMEOUT', `Upstream "${target}" did not answer server/discover within ${timeoutMs} ms`, {
      target,
      method: 'server/discover',
      timeoutMs,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Asks `server/discover` and reads the era from the answer. Never throws. */
export async function probeEra(wire: StatelessHttpWire, target: string, timeoutMs: number, logger: Logger): Promise<ProbeOutcome> {
  try {
    const answer = await askDiscover(wire, target, timeoutMs);
    if (namesModernRevision(answer)) {
      const error = new GatewayError('GW_UPSTREAM_INVALID_ANSWER', `Upstream "${target}" names 2026-07-28 but refused server/discover at it twice`, {
        target,
        reason: 'server/discover refused twice with -32022',
      });
      return { era: '2026', error };
    }
    if (isErrorResponse(answer)) return { era: '2025', conclusive: true, why: `server/discover answered with error ${answer.error.code}` };
    const result = (answer as { result: JsonObject }).result;
    const versions = result.supportedVersions;
    if (Array.isArray(versions) && versions.includes(MODERN_PROTOCOL_VERSION)) return { era: '2026', discovered: result };
    return { era: '2025', conclusive: true, why: 'server/discover does not list 2026-07-28' };
  } catch (err) {
    const error = err instanceof GatewayError ? err : undefined;
    const status = typeof error?.details.status === 'number' ? error.details.status : undefined;
    if (error?.code === 'GW_UPSTREAM_HTTP_ERROR' && status !== undefined && status >= 400 && status < 500 && !INCONCLUSIVE_STATUS.has(status)) {
      return { era: '2025', conclusive: true, why: `server/discover answered HTTP ${status}` };
    }
    const why = status !== undefined ? `HTTP ${status}` : (error?.code ?? 'failed');
    logger.debug({ why }, 'era probe inconclusive');
    return { era: '2025', conclusive: false, why, error: error ?? toGatewayError(err) };
  }
}

/** A discover result a `protocol: 2026` target must give: it lists 2026-07-28. */
export function checkDiscovered(target: string, answer: unknown): JsonObject {
  const result = isObject(answer) && isObject(answer.result) ? answer.result : undefined;
  if (result === undefined) throw new GatewayError('GW_UPSTREAM_INVALID_ANSWER', `Upstream "${target}" refused server/discover`, { target, reason: 'server/discover failed' });
  const versions = result.supportedVersions;
  if (!Array.isArray(versions) || !versions.includes(MODERN_PROTOCOL_VERSION)) {
    throw new GatewayError('GW_UPSTREAM_INVALID_ANSWER', `Upstream "${target}" does not list 2026-07-28 in server/discover`, {
      target,
      reason: 'server/discover does not list 2026-07-28',
    });
  }
  return result;
}
