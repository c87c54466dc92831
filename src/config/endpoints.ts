/**
 * The downstream URLs a config is served at, for the start-up log line and for docs: `/mcp` (a lone
 * target's pass-through, or every target at once when there are several), each group at
 * `/groups/<name>/mcp`, each virtual server at `/virtual/<name>/mcp`, and every target at `/servers/<name>/mcp`.
 */
import { aggregateOf, type GatewayConfig } from './types.ts';

/** Absolute endpoint URLs, the short `/mcp` first. */
export function endpointUrls(config: GatewayConfig, baseUrl: string): string[] {
  const names = [...config.targets.keys()];
  const groups = [...aggregateOf(config).groups.keys()].map((name) => new URL(`/groups/${encodeURIComponent(name)}/mcp`, baseUrl).href);
  const virtuals = [...(aggregateOf(config).virtuals?.keys() ?? [])].map((name) => new URL(`/virtual/${encodeURIComponent(name)}/mcp`, baseUrl).href);
  const urls = names.map((name) => new URL(`/servers/${encodeURIComponent(name)}/mcp`, baseUrl).href);
  return [new URL('/mcp', baseUrl).href, ...groups, ...virtuals, ...urls];
}
