/**
 * The owner's side of a replica hop (docs/scaling.md, "The hop"): a request another replica
 * forwarded carries the principal that replica verified and an HMAC from the cluster key
 * (cluster/hop-signature.ts). This `onRequest` hook, first on every MCP route, accepts such a
 * request only when a key of the ring verifies it, and then takes its principal in place of
 * authenticating again (the edge did; the client's credential is no longer what reaches us).
 * A hop header that does not verify (from outside the cluster, forged, stale, altered) is refused
 * with 403 GW_HOP_REFUSED, and so is a hop whose body is not the one its MAC covers (checked once
 * the body is read). A hop carries no client credential in clear: any Authorization or Cookie on
 * it is dropped, and the caller's Authorization is restored only from the sealed credential the
 * edge adds when the owner's target needs it. The session's own principal binding is still
 * checked by the route.
 *
 * Without `gateway.cluster` the hook is not installed and the headers mean nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../upstream/caller.ts';
import type { HopFacts, HopSigner } from '../cluster/hop-signature.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../log/logger.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Forwarded by another replica of the cluster, signature verified: never forwarded again. */
    hop: boolean;
  }
}

export const HOP_HEADER = 'x-switchboard-hop';
export const HOP_PRINCIPAL_HEADER = 'x-switchboard-principal';
/** The caller's credential, sealed for the owner (only when its target needs it). */
export const HOP_CREDENTIAL_HEADER = 'x-switchboard-credential';

/** The principal as the hop carries it: base64url JSON (sets as lists). */
export function encodePrincipal(principal: Principal | undefined): string {
  if (principal === undefined) return '';
  const { id, kind, subject, scopes, claims, claimsCut } = principal;
  const plain = { id, kind, subject, scopes: [...scopes], claims, claimsCut: claimsCut === undefined ? undefined : [...claimsCut] };
  return Buffer.from(JSON.stringify(plain), 'utf8').toString('base64url');
}

/** Only ever called on a blob whose signature verified: it is what a replica of ours wrote. */
function decodePrincipal(blob: string): Principal | undefined {
  if (blob === '') return undefined;
  const plain = JSON.parse(Buffer.from(blob, 'base64url').toString('utf8')) as {
    id: string;
    kind: Principal['kind'];
    subject: string;
    scopes: string[];
    claims?: Record<string, string[]>;
    claimsCut?: string[];
  };
  return {
    id: plain.id,
    kind: plain.kind,
    subject: plain.subject,
    scopes: new Set(plain.scopes),
    ...(plain.claims === undefined ? {} : { claims: plain.claims }),
    ...(plain.claimsCut === undefined ? {} : { claimsCut: new Set(plain.claimsCut) }),
  };
}

/** What a hop's MAC covers, read from the request as it arrived (the edge signs the same, hop-forward.ts). */
export function hopFactsOf(method: string, url: string, sessionId: unknown, principal: string, credential = ''): HopFacts {
  return { method, url, sessionId: typeof sessionId === 'string' ? sessionId : '', principal, credential };
}

/** The body digest each verified hop's MAC covers, checked once the body is read. */
const expectedDigest = new WeakMap<FastifyRequest, string>();

/**
 * Decorates every request with `hop` (false); with a signer, verifies the hops that claim to be:
 * their headers as they arrive (before authentication, which a hop skips), their body once read.
 */
export function registerHopGuard(mcp: FastifyInstance, signer: HopSigner | undefined, logger: Logger): void {
  mcp.decorateRequest('hop', false);
  if (signer === undefined) return;
  const log = logger.child({ component: 'replica-hop' });
  const refuse = (request: FastifyRequest, why: string) => {
    log.warn({ method: request.method, path: request.url.split('?', 1)[0] }, why);
    return new GatewayError('GW_HOP_REFUSED');
  };
  mcp.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const headers = request.headers;
    const signature = headers[HOP_HEADER];
    const blob = headers[HOP_PRINCIPAL_HEADER];
    const sealed = headers[HOP_CREDENTIAL_HEADER];
    if (signature === undefined && blob === undefined && sealed === undefined) return done();
    const principal = typeof blob === 'string' ? blob : '';
    const credential = typeof sealed === 'string' ? sealed : '';
    const facts = hopFactsOf(request.method, request.url, headers['mcp-session-id'], principal, credential);
    const digest = typeof signature !== 'string' || (blob !== undefined && typeof blob !== 'string') || (sealed !== undefined && typeof sealed !== 'string') ? undefined : signer.verify(signature, facts);
    if (digest === undefined) return done(refuse(request, 'refused a replica hop whose signature does not verify'));
    // What a hop says about the caller is only what the signed hop carries: never a plain header.
    delete headers.authorization;
    delete headers.cookie;
    if (credential !== '') {
      const opened = signer.openCredential(credential, facts);
      if (opened === undefined) return done(refuse(request, 'refused a replica hop whose credential does not open'));
      headers.authorization = opened;
    }
    try {
      request.principal = decodePrincipal(principal);
    } catch {
      return done(new GatewayError('GW_HOP_REFUSED'));
    }
    expectedDigest.set(request, digest);
    request.hop = true;
    done();
  });
  // The body as read (bounded by limits.maxBodyBytes) must be the one the edge signed.
  mcp.addHook('preValidation', (request: FastifyRequest, _reply, done) => {
    const digest = request.hop ? expectedDigest.get(request) : undefined;
    if (digest === undefined) return done();
    const body = typeof request.body === 'string' ? request.body : '';
    if (signer.digest(body) !== digest) return done(refuse(request, 'refused a replica hop whose body is not the one it was signed with'));
    done();
  });
}
