/**
 * From a parsed command line to the GatewayConfig to run: pick the source (file, quick mode, the
 * built-in default), then apply the command-line overrides on top.
 */
import type { ConfigSource } from './cli-args.ts';
import type { Environment } from './interpolate.ts';
import { loadConfigFile } from './load.ts';
import { withOverrides, type ConfigOverrides } from './normalise.ts';
import { buildDefaultConfig, buildQuickConfig, resolveEverythingServer } from './quick.ts';
import type { GatewayConfig } from './types.ts';

export interface ResolveConfigOptions {
  readonly env?: Environment;
  readonly cwd?: string;
  /** Finds the built-in default's server; replaceable so tests can pretend it is not installed. */
  readonly resolveEverything?: () => string | undefined;
}

/** Throws ConfigError for anything the operator has to fix. */
export async function resolveConfig(
  source: ConfigSource,
  overrides: ConfigOverrides,
  options: ResolveConfigOptions = {},
): Promise<GatewayConfig> {
  let config: GatewayConfig;
  switch (source.kind) {
    case 'file':
      config = await loadConfigFile(source.path, {
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
      break;
    case 'quick':
      config = buildQuickConfig(source.command, source.args, source.env, source.headers);
      break;
    case 'default':
      config = buildDefaultConfig(options.resolveEverything ?? resolveEverythingServer);
      break;
  }
  return withOverrides(config, overrides);
}
