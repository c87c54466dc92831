/**
 * The per-user token vault (upstream/oauth/vault.ts) over its file store: records are sealed
 * (AES-256-GCM, keys derived from the configured secret), so the file holds no token and no
 * principal name; a record moved to another principal's id, altered, or opened under another key
 * counts as absent; `take` redeems once; the file is written whole with mode 0600 and reloads.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileVaultStore } from '../../../src/upstream/oauth/vault-file.ts';
import { createVault, deriveVaultKeys, seal, unseal } from '../../../src/upstream/oauth/vault.ts';

const SECRET = 'a-vault-secret-of-at-least-32-characters!';
const TOKEN = 'upstream-access-token-0123456789abcdef';
let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vault-'));
  file = join(dir, 'vault.json');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('the OAuth vault', () => {
  it('keeps records sealed in a 0600 file: no token, no principal name; they reload', async () => {
    const vault = createVault(deriveVaultKeys(SECRET), await createFileVaultStore(file));
    await vault.put('conn', ['key:alice', 'docs'], { accessToken: TOKEN, principal: 'key:alice' });
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('alice');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = createVault(deriveVaultKeys(SECRET), await createFileVaultStore(file));
    expect(await again.get('conn', ['key:alice', 'docs'])).toEqual({ accessToken: TOKEN, principal: 'key:alice' });
    expect(await again.get('conn', ['key:bob', 'docs'])).toBeUndefined();
  });

  it("a record copied into another principal's place, altered, or read with another key does not open", async () => {
    const vault = createVault(deriveVaultKeys(SECRET), await createFileVaultStore(file));
    await vault.put('conn', ['key:alice', 'docs'], { accessToken: TOKEN });
    await vault.put('conn', ['key:bob', 'docs'], { accessToken: 'bob-token-0123456789' });
    const records = JSON.parse(await readFile(file, 'utf8')) as Record<string, { v: string }>;
    const [aliceId, bobId] = Object.keys(records);
    // A hostile store swaps the records: each now sits at the other's id.
    await writeFile(file, JSON.stringify({ [aliceId!]: records[bobId!], [bobId!]: records[aliceId!] }));
    const swapped = createVault(deriveVaultKeys(SECRET), await createFileVaultStore(file));
    expect(await swapped.get('conn', ['key:alice', 'docs'])).toBeUndefined();
    expect(await swapped.get('conn', ['key:bob', 'docs'])).toBeUndefined();
    const other = createVault(deriveVaultKeys('another-secret-of-at-least-32-characters'), await createFileVaultStore(file));
    expect(await other.all('conn', 10)).toEqual([]);
    const keys = deriveVaultKeys(SECRET);
    const sealed = seal(keys.seal, 'id', 'plain');
    expect(unseal(keys.seal, 'id', sealed)).toBe('plain');
    expect(unseal(keys.seal, 'id', sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA'))).toBeUndefined();
    expect(unseal(keys.seal, 'id', 'v1.x.y')).toBeUndefined();
  });

  it('take redeems a pending consent once; an expired one is gone', async () => {
    let now = 1_000;
    const vault = createVault(deriveVaultKeys(SECRET), await createFileVaultStore(file, () => now));
    await vault.put('flow', ['state-1'], { verifier: 'v' }, 60);
    await vault.put('flow', ['state-2'], { verifier: 'w' }, 60);
    const [first, second] = await Promise.all([vault.take('flow', ['state-1']), vault.take('flow', ['state-1'])]);
    expect([first, second].filter((x) => x !== undefined)).toEqual([{ verifier: 'v' }]);
    now += 61_000;
    expect(await vault.take('flow', ['state-2'])).toBeUndefined();
  });

  it('refuses a file that is not a vault rather than overwrite it', async () => {
    await writeFile(file, '[1,2]');
    await expect(createFileVaultStore(file)).rejects.toThrow(/not a vault file/);
  });
});
