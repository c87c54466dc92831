/**
 * Where an upstream's users get their tokens, found the way the MCP authorization spec (2025-11-25,
 * "Authorization Server Discovery") has a client find it: the upstream's 401 names its protected
 * resource metadata (RFC 9728, `resource_metadata` in `WWW-Authenticate`), else the well-known URI
 * for its path, then its root; that document names the authorization server, whose metadata comes
 * from RFC 8414 or OpenID discovery, in the spec's order of well-known URIs.
 *
 * Checked, because each document is the upstream's or a third party's word: the metadata's
 * `resource` must be the upstream's own URL (RFC 9728 section 3.3: else a server could have tokens
 * for another resource sent to it), the server metadata's `issuer` must be the one asked for (RFC
 * 8414 section 3.3), and it must offer PKCE with S256 (the spec: refuse to proceed otherwise).
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { getJson } from '../../transport/http-json.ts';
import { probeChallenge } from '../../transport/oauth-wire.ts';

export interface ServerMetadata {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly registrationEndpoint: string | undefined;
  readonly revocationEndpoint: string | undefined;
  /** RFC 9207: the server puts `iss` in its authorization responses. */
  readonly issInResponse: boolean;
  readonly clientIdMetadataDocuments: boolean;
  readonly scopesSupported: readonly string[] | undefined;
}

export interface Discovered {
  /** The resource the tokens are for (RFC 8707): the upstream's URL, as its metadata confirms. */
  readonly resource: string;
  readonly server: ServerMetadata;
  /** Scopes the upstream asked for in its challenge, else those its metadata lists. */
  readonly scopes: readonly string[];
}

/** One auth-param of a `WWW-Authenticate` Bearer challenge (quoted or token form). */
export function challengeParam(header: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|[\\s,])${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, 'i').exec(header);
  if (match === null) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2];
}

const failed = (target: string, reason: string) => new GatewayError('GW_UPSTREAM_AUTH_FAILED', `Connecting an account at upstream "${target}" failed: ${reason}`, { target, reason });

const string = (value: unknown) => (typeof value === 'string' && value.length > 0 && value.length <= 2_048 ? value : undefined);
const httpUrl = (value: unknown) => {
  const text = string(value);
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
};
const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').slice(0, 100) : undefined);

/** RFC 9728 section 3.1: the well-known URI is inserted between the host and the resource's path. */
const wellKnown = (base: string, suffix: string) => {
  const url = new URL(base);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return [`${url.origin}/.well-known/${suffix}${path}`, ...(path === '' ? [] : [`${url.origin}/.well-known/${suffix}`])];
};

/** The same URL? Compared as parsed (case of scheme and host, default port), path and query exactly. */
export const sameResource = (a: string, b: string) => {
  try {
    return new URL(a).href.replace(/\/$/, '') === new URL(b).href.replace(/\/$/, '');
  } catch {
    return false;
  }
};

async function resourceMetadata(target: string, url: string): Promise<{ doc: Record<string, unknown>; challengeScopes: string[] }> {
  const challenge = await probeChallenge(url).catch(() => undefined);
  const header = challenge?.wwwAuthenticate ?? '';
  const named = httpUrl(challengeParam(header, 'resource_metadata'));
  const challengeScopes = (challengeParam(header, 'scope') ?? '').split(' ').filter(Boolean);
  for (const candidate of named !== undefined ? [named] : wellKnown(url, 'oauth-protected-resource')) {
    const got = await getJson(candidate, { maxBytes: 64 * 1024 }).catch(() => undefined);
    if (got?.status === 200 && typeof got.body === 'object' && got.body !== null) return { doc: got.body as Record<string, unknown>, challengeScopes };
  }
  throw failed(target, 'no protected resource metadata');
}

async function serverMetadata(target: string, issuer: string): Promise<ServerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  // The 2025-11-25 order: RFC 8414 with the path inserted, OpenID with it inserted, OpenID appended.
  const candidates = path === ''
    ? [`${url.origin}/.well-known/oauth-authorization-server`, `${url.origin}/.well-known/openid-configuration`]
    : [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}/.well-known/openid-configuration${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
  for (const candidate of candidates) {
    const got = await getJson(candidate, { maxBytes: 256 * 1024 }).catch(() => undefined);
    if (got?.status !== 200 || typeof got.body !== 'object' || got.body === null) continue;
    const doc = got.body as Record<string, unknown>;
    if (doc.issuer !== issuer) throw failed(target, 'the authorization server metadata names another issuer');
    const authorizationEndpoint = httpUrl(doc.authorization_endpoint);
    const tokenEndpoint = httpUrl(doc.token_endpoint);
    if (authorizationEndpoint === undefined || tokenEndpoint === undefined) throw failed(target, 'the authorization server metadata lacks its endpoints');
    if (!(strings(doc.code_challenge_methods_supported) ?? []).includes('S256')) throw failed(target, 'the authorization server does not offer PKCE with S256');
    return {
      issuer,
      authorizationEndpoint,
      tokenEndpoint,
      registrationEndpoint: httpUrl(doc.registration_endpoint),
      revocationEndpoint: httpUrl(doc.revocation_endpoint),
      issInResponse: doc.authorization_response_iss_parameter_supported === true,
      clientIdMetadataDocuments: doc.client_id_metadata_document_supported === true,
      scopesSupported: strings(doc.scopes_supported),
    };
  }
  throw failed(target, 'no authorization server metadata');
}

/** Everything a consent for `url` needs; `configuredScopes` win over what the upstream asks for. */
export async function discover(target: string, url: string, configuredScopes: readonly string[] | undefined): Promise<Discovered> {
  const { doc, challengeScopes } = await resourceMetadata(target, url);
  const resource = string(doc.resource);
  if (resource === undefined || !sameResource(resource, url)) throw failed(target, 'the protected resource metadata is for another resource');
  const issuer = string(strings(doc.authorization_servers)?.[0]);
  if (issuer === undefined || httpUrl(issuer) === undefined) throw failed(target, 'the protected resource metadata names no authorization server');
  const server = await serverMetadata(target, issuer);
  const scopes = configuredScopes ?? (challengeScopes.length > 0 ? challengeScopes : (strings(doc.scopes_supported) ?? []));
  return { resource, server, scopes };
}
