/** The compile cache is used only from a directory of this user's (log/compile-cache.ts). */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enableCompileCache } from '../../../src/log/compile-cache.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'compile-cache-'));
  dirs.push(dir);
  return dir;
};

describe('enableCompileCache', () => {
  it('is off when the operator says so', () => {
    expect(enableCompileCache({ SWITCHBOARD_COMPILE_CACHE: 'off' })).toEqual({ on: false, why: 'turned off' });
    expect(enableCompileCache({ NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual({ on: false, why: 'turned off' });
  });

  it('refuses a cache directory others can write, or one that is a symlink (its contents are code this process runs)', () => {
    const open = scratch();
    mkdirSync(join(open, 'switchboard', 'compile-cache'), { recursive: true });
    chmodSync(join(open, 'switchboard', 'compile-cache'), 0o777);
    expect(enableCompileCache({ XDG_CACHE_HOME: open })).toEqual({ on: false, why: 'no private cache directory' });
    const linked = scratch();
    mkdirSync(join(linked, 'switchboard'));
    symlinkSync(scratch(), join(linked, 'switchboard', 'compile-cache'));
    expect(enableCompileCache({ XDG_CACHE_HOME: linked })).toEqual({ on: false, why: 'no private cache directory' });
  });
});
