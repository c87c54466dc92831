import { describe, expect, it } from 'vitest';
import { DEFAULT_INHERITED_ENV } from '../../../src/config/default-env.ts';
import { parseConfig } from '../../../src/config/load.ts';
import type { StdioTargetConfig } from '../../../src/config/types.ts';
import { childEnv } from '../../../src/transport/child-env.ts';

const parent = { PATH: '/bin', HOME: '/root', GITHUB_TOKEN: 'ghp_secret', HTTPS_PROXY: 'http://proxy' };

describe('childEnv', () => {
  it('passes only the default names (proxy and CA variables among them, issue: npx behind a proxy), then the target env on top', () => {
    const env = childEnv({ env: { API_KEY: 'k', PATH: '/custom' }, inheritEnv: DEFAULT_INHERITED_ENV }, parent);
    expect(env).toEqual({ PATH: '/custom', HOME: '/root', HTTPS_PROXY: 'http://proxy', API_KEY: 'k' });
    expect(env.GITHUB_TOKEN).toBeUndefined();
  });

  it("passes everything with 'all'", () => {
    expect(childEnv({ env: {}, inheritEnv: 'all' }, parent)).toEqual(parent);
  });
});

describe('inheritEnv in the config file', () => {
  const server = (inheritEnv: unknown) =>
    parseConfig({ mcpServers: { s: { command: 'x', ...(inheritEnv === undefined ? {} : { inheritEnv }) } } }).targets.get('s') as StdioTargetConfig;

  it('defaults to the minimal list, adds listed names, or takes everything', () => {
    expect(server(undefined).inheritEnv).toEqual(DEFAULT_INHERITED_ENV);
    expect(server(['HTTPS_PROXY']).inheritEnv).toEqual([...DEFAULT_INHERITED_ENV, 'HTTPS_PROXY']);
    expect(server(true).inheritEnv).toBe('all');
  });

  it('refuses anything else, naming the key', () => {
    expect(() => server('yes please')).toThrow(/mcpServers\.s\.inheritEnv/);
  });
});
