/**
 * Which client the gateway is at an upstream's authorization server, in the priority order of the
 * MCP authorization spec (2025-11-25, "Client Registration Approaches"): a client configured for the
 * target (pre-registration); else a Client ID Metadata Document (the gateway's own at
 * `<publicUrl>/oauth/client.json`) when the server says it takes them and that URL is https (the
 * draft requires it); else dynamic client registration (RFC 7591), once per (target, issuer,
 * redirect URI), the registration kept sealed in the vault. None of these: GW_UPSTREAM_AUTH_FAILED.
 */
import { GatewayError } from '../../errors/gateway-error.ts';
import { postJson } from '../../transport/oauth-wire.ts';
import type { ServerMetadata } from './discovery.ts';
import type { ClientCredentials } from './token-endpoint.ts';
import type { Vault } from './vault.ts';

/** The path of the gateway's Client ID Metadata Document (served by http/oauth-routes.ts). */
export const CLIENT_DOCUMENT_PATH = '/oauth/client.json';
export const CALLBACK_PATH = '/oauth/callback';

/** The document a server fetches for the client id `<base>/oauth/client.json` (draft-ietf-oauth-client-id-metadata-document). */
export function clientDocument(base: string, name: string): Record<string, unknown> {
  return {
    client_id: `${base}${CLIENT_DOCUMENT_PATH}`,
    client_name: name,
    client_uri: base,
    redirect_uris: [`${base}${CALLBACK_PATH}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

export interface ClientChoice {
  readonly target: string;
  readonly configured: ClientCredentials | undefined;
  readonly server: ServerMetadata;
  readonly base: string;
  readonly clientName: string;
}

export async function clientFor(vault: Vault, choice: ClientChoice): Promise<ClientCredentials> {
  const { target, server, base } = choice;
  if (choice.configured !== undefined) return choice.configured;
  if (server.clientIdMetadataDocuments && base.startsWith('https://')) return { clientId: `${base}${CLIENT_DOCUMENT_PATH}` };
  const redirectUri = `${base}${CALLBACK_PATH}`;
  if (server.registrationEndpoint === undefined) {
    throw new GatewayError('GW_UPSTREAM_AUTH_FAILED', `Connecting an account at upstream "${target}" failed: no client is configured and the authorization server registers none`, { target, reason: 'no client registration' });
  }
  const parts = [target, server.issuer, redirectUri];
  const known = await vault.get<ClientCredentials>('client', parts);
  if (known !== undefined) return known;
  const res = await postJson(server.registrationEndpoint, {
    client_name: choice.clientName,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }).catch(() => undefined);
  const body = res?.body as { client_id?: unknown; client_secret?: unknown; token_endpoint_auth_method?: unknown } | undefined;
  if ((res?.status !== 201 && res?.status !== 200) || typeof body?.client_id !== 'string' || body.client_id.length > 512) {
    throw new GatewayError('GW_UPSTREAM_AUTH_FAILED', `Connecting an account at upstream "${target}" failed: dynamic client registration was refused`, { target, reason: 'registration refused' });
  }
  // A server may register another method than the 'none' asked for (RFC 7591 section 3.2.1): its answer says which.
  const authMethod = body.token_endpoint_auth_method === 'client_secret_post' ? ('client_secret_post' as const) : undefined;
  const client: ClientCredentials = { clientId: body.client_id, ...(typeof body.client_secret === 'string' ? { clientSecret: body.client_secret, authMethod } : {}) };
  await vault.put('client', parts, client);
  return client;
}
