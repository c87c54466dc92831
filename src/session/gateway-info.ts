/**
 * How the gateway names itself (defined in upstream/gateway-identity.ts, below this layer, so the
 * era probe sends the same clientInfo as a composed handshake).
 */
export { GATEWAY_CLIENT_INFO, GATEWAY_SERVER_INFO, VERSION } from '../upstream/gateway-identity.ts';
