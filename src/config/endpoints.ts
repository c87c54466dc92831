/**
 * The downstream URLs a config is served at, for the start-up log line and for docs: every target
 * at `/servers/<name>/mcp`, and a lone target also at `/mcp` (quick mode's promise).
 */
import type { GatewayConfig } from './types.ts';

/** Absolute endpoint URLs, the short `/mcp` first when there is a single target. */
export function endpointUrls(config: GatewayConfig, baseUrl: string): string[] {
  const names = [...config.targets.keys()];
  const urls = names.map((name) => new URL(`/servers/${encodeURIComponent(name)}/mcp`, baseUrl).href);
  return names.length === 1 ? [new URL('/mcp', baseUrl).href, ...urls] : urls;
}
