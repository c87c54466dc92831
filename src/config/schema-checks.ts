/**
 * The config file's checks across entries (schema.ts runs them once every entry has parsed): what
 * no single entry's schema can see, such as a group naming an unknown server, two servers sharing a
 * prefix, or an option that a server's other options rule out.
 */
import type { z } from 'zod';
import { checkContainment } from './containment-schema.ts';
import { checkOverrides, type VirtualServerEntry } from './overrides-schema.ts';
import type { ServerEntry } from './server-schema.ts';

/** The parsed document, as far as these checks read it. */
interface ParsedConfig {
  mcpServers: Record<string, ServerEntry>;
  gateway: { groups: Record<string, { servers: string[] }>; virtualServers: Record<string, VirtualServerEntry>; auth?: unknown; oauth?: unknown };
}

/** Every cross-entry check, each adding its issues at the path it is about. */
export function checkConfigFile(config: ParsedConfig, ctx: z.RefinementCtx): void {
  if (!Object.values(config.mcpServers).some((server) => !server.disabled)) {
    ctx.addIssue({ code: 'custom', path: ['mcpServers'], message: 'at least one enabled server is required' });
  }
  checkAggregate(config, ctx);
  checkOverrides(config, ctx);
  checkStderrInErrors(config.mcpServers, ctx);
  checkContainment(config.mcpServers, ctx);
  checkSpares(config.mcpServers, ctx);
  checkRequiredScopes(config, ctx);
  checkUserOAuth(config, ctx);
}

/** Per-user tokens need the vault's key and a callback (gateway.oauth), and principals to tell users apart (gateway.auth). */
function checkUserOAuth(config: ParsedConfig, ctx: z.RefinementCtx): void {
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (server.type === 'stdio' || server.oauth === undefined) continue;
    if (config.gateway.oauth === undefined) ctx.addIssue({ code: 'custom', path: ['mcpServers', name, 'oauth'], message: 'needs gateway.oauth (the vault key)' });
    if (config.gateway.auth === undefined) ctx.addIssue({ code: 'custom', path: ['mcpServers', name, 'oauth'], message: 'needs gateway.auth: each user\'s account is kept per principal' });
  }
}

/** Step-up scopes come from the caller's token: without gateway.auth no call could ever hold one. */
function checkRequiredScopes(config: ParsedConfig, ctx: z.RefinementCtx): void {
  if (config.gateway.auth !== undefined) return;
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (server.requiredScopes === undefined) continue;
    ctx.addIssue({ code: 'custom', path: ['mcpServers', name, 'requiredScopes'], message: 'needs gateway.auth: the scopes are read from the caller\'s token' });
  }
}

/** A shared child's stderr mixes every session's traffic: it must never reach one session's errors. */
function checkStderrInErrors(servers: Record<string, ServerEntry>, ctx: z.RefinementCtx): void {
  for (const [name, server] of Object.entries(servers)) {
    if (server.type === 'stdio' && server.stderrInErrors && server.upstream.mode === 'shared') {
      ctx.addIssue({
        code: 'custom',
        path: ['mcpServers', name, 'stderrInErrors'],
        message: 'cannot be true with upstream.mode "shared": a shared child\'s stderr carries every session\'s traffic',
      });
    }
  }
}

/**
 * A spare is started before anyone asks for it: a shared child is already the pool's, and a child
 * whose env depends on the caller (principalEnv) cannot be made before the caller is known.
 */
function checkSpares(servers: Record<string, ServerEntry>, ctx: z.RefinementCtx): void {
  for (const [name, server] of Object.entries(servers)) {
    if (server.type !== 'stdio' || server.upstream.spares === 0) continue;
    const why =
      server.upstream.mode === 'shared'
        ? 'cannot be set with upstream.mode "shared": the pool\'s children already serve every session'
        : Object.keys(server.principalEnv).length > 0
          ? 'cannot be set with principalEnv: a child\'s env depends on its caller, unknown before the session'
          : undefined;
    if (why !== undefined) ctx.addIssue({ code: 'custom', path: ['mcpServers', name, 'upstream', 'spares'], message: why });
  }
}

/** Group members must exist; two servers must not share a (non-empty) prefix. */
function checkAggregate(config: ParsedConfig, ctx: z.RefinementCtx): void {
  for (const [name, group] of Object.entries(config.gateway.groups)) {
    group.servers.forEach((server, i) => {
      if (!Object.hasOwn(config.mcpServers, server)) {
        ctx.addIssue({ code: 'custom', path: ['gateway', 'groups', name, 'servers', i], message: `unknown server "${server}"` });
      }
    });
  }
  const byPrefix = new Map<string, string>();
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (server.disabled) continue;
    const prefix = server.prefix ?? name;
    if (prefix === '') continue;
    const other = byPrefix.get(prefix);
    if (other !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['mcpServers', name, 'prefix'],
        message: `servers "${other}" and "${name}" would both expose their names under the prefix "${prefix}"`,
      });
    } else byPrefix.set(prefix, name);
  }
}
