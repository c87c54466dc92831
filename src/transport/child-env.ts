/**
 * The environment a stdio child gets: what its target lets it inherit from the gateway's own
 * environment, then the target's `env` on top.
 */
import type { StdioTargetConfig } from '../config/types.ts';

export function childEnv(target: Pick<StdioTargetConfig, 'env' | 'inheritEnv'>, parent: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (target.inheritEnv === 'all') return { ...parent, ...target.env };
  const env: NodeJS.ProcessEnv = {};
  for (const name of target.inheritEnv) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  return Object.assign(env, target.env);
}
