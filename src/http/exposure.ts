/**
 * Start-up checks of how the gateway is exposed (main.ts runs them): a JWT audience that cannot be
 * checked is refused, a gateway anyone can reach without authentication is warned about.
 */
import { configError } from '../config/config-error.ts';
import type { GatewayConfig } from '../config/types.ts';
import type { Logger } from '../log/logger.ts';
import { isLoopbackAddress } from './loopback.ts';

/**
 * JWT audiences are checked against the gateway's own URL (http/own-origin.ts). Listening beyond
 * loopback with neither gateway.auth.publicUrl nor gateway.allowedHosts, the gateway cannot know
 * that URL: every Host would pass and a token minted for any other service, presented with that
 * service's name as Host, would be taken for ours. Refused at start rather than run that way.
 */
export function refuseUnknownAudience(config: GatewayConfig): void {
  const auth = config.auth;
  if (auth?.jwt === undefined || auth.publicUrl !== undefined || config.allowedHosts !== undefined || isLoopbackAddress(config.listen.host)) return;
  throw configError(
    'gateway.auth.publicUrl',
    `JWT audiences must be checked against the gateway's own URL, which listening on ${config.listen.host} it cannot know: set gateway.auth.publicUrl (or gateway.allowedHosts, the names clients use)`,
  );
}

/**
 * Listening beyond loopback with no client authentication (the gateway has none yet) means anyone
 * who can reach the port runs every tool of every server: say so loudly, every start.
 */
export function warnIfExposed(config: GatewayConfig, logger: Logger): void {
  const auth = config.auth;
  if (auth !== undefined && !auth.anonymous) return;
  if (config.corsOrigins?.includes('*') === true) {
    logger.warn({ corsOrigins: config.corsOrigins }, 'EXPOSED: CORS allows any origin and there is no client authentication; any web page the user opens can call every tool');
  }
  if (isLoopbackAddress(config.listen.host)) return;
  const hosts = config.allowedHosts;
  logger.warn(
    {
      listen: config.listen.host,
      allowedHosts: hosts ?? 'any (unset)',
      fix: 'listen on 127.0.0.1 behind an authenticating proxy, or restrict the network; set gateway.allowedHosts to the names clients use',
    },
    'EXPOSED: listening beyond loopback with no client authentication; anyone who reaches this port can call every tool of every server',
  );
}
