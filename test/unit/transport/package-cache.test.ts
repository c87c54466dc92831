import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StdioTargetConfig } from '../../../src/config/types.ts';
import { applyLockedPackages, installerEnv } from '../../../src/transport/package-cache.ts';
import { LOCK_FILE } from '../../../src/transport/package-lock.ts';
import { buildConfig } from '../../support/gateway.ts';

const cacheDir = mkdtempSync(join(tmpdir(), 'sb-lock-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function lockWith(entry: Record<string, unknown>): void {
  writeFileSync(join(cacheDir, LOCK_FILE), JSON.stringify({ version: 1, packages: { 'npm:pkg@latest': { ecosystem: 'npm', name: 'pkg', version: '1.0.0', integrity: '', treeHash: 'x', installedAt: '', ...entry } } }));
}

const config = () => buildConfig({ targets: { t: { command: 'npx', args: ['-y', 'pkg', '--flag'] } }, packages: { cacheDir, install: true } });
const target = () => applyLockedPackages(config()).targets.get('t') as StdioTargetConfig;

describe('package cache', () => {
  it('the installer gets the machine\'s environment for installing, never the gateway\'s secrets', () => {
    const env = installerEnv({ PATH: '/usr/bin', HOME: '/h', HTTPS_PROXY: 'http://p', npm_config_registry: 'http://r', UV_INDEX_URL: 'http://i', SWITCHBOARD_API_KEY: 'k', GITHUB_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 's' });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/h', HTTPS_PROXY: 'http://p', npm_config_registry: 'http://r', UV_INDEX_URL: 'http://i' });
  });

  it('a locked package runs its entry point on the gateway\'s Node with the call\'s own arguments', () => {
    mkdirSync(join(cacheDir, 'npm/pkg@1.0.0/node_modules/pkg'), { recursive: true });
    writeFileSync(join(cacheDir, 'npm/pkg@1.0.0/node_modules/pkg/cli.js'), '');
    lockWith({ dir: 'npm/pkg@1.0.0', bins: { pkg: 'node_modules/pkg/cli.js' } });
    expect(target()).toMatchObject({ command: process.execPath, args: [join(cacheDir, 'npm/pkg@1.0.0/node_modules/pkg/cli.js'), '--flag'], package: { runner: 'npx', spec: 'pkg@latest', version: '1.0.0' } });
  });

  it('a hostile lock entry (a folder or program outside the cache) is ignored: the target is refused, nothing outside runs', () => {
    for (const entry of [{ dir: '../../etc', bins: { pkg: 'passwd' } }, { dir: 'npm/pkg@1.0.0', bins: { pkg: '../../../../../bin/sh' } }]) {
      lockWith(entry);
      expect(target().package?.error, JSON.stringify(entry)).toMatch(/is not installed/);
    }
  });

  it('a config without packages.install runs runner commands as written', () => {
    const plain = buildConfig({ targets: { t: { command: 'npx', args: ['-y', 'pkg'] } } });
    expect(applyLockedPackages(plain).targets.get('t')).toMatchObject({ command: 'npx', args: ['-y', 'pkg'] });
  });
});
