import { describe, expect, it } from 'vitest';
import { canonicalGlob, canonicalUri, foldName } from '../../../src/router/canonical.ts';

describe('canonicalUri: one spelling for every URI a rule matches', () => {
  const root = 'file:///srv/files';
  it.each([
    [`${root}/public/../private/x`, `${root}/private/x`],
    [`${root}/public/./../private/./x`, `${root}/private/x`],
    [`${root}//private//x`, `${root}/private/x`],
    ['file://localhost/srv/files/private/x', `${root}/private/x`],
    ['file://LOCALHOST/srv/files/private/x', `${root}/private/x`],
    [`${root}/%70rivate/x`, `${root}/private/x`],
    [`${root}/public/%2e%2e/private/x`, `${root}/private/x`],
    [`${root}/public/%2E%2E/private/x`, `${root}/private/x`],
    ['FILE:///srv/files/private/x', `${root}/private/x`],
    ['HTTPS://Example.COM./a/b', 'https://example.com/a/b'],
    ['https://example.com/a%3fb', 'https://example.com/a%3Fb'],
    ['https://example.com/a b', 'https://example.com/a%20b'],
    [`${root}/../../../etc/passwd`, 'file:///etc/passwd'],
    [`${root}/priv\u00e9`, `${root}/priv%C3%A9`],
    [`${root}/prive\u0301`, `${root}/priv%C3%A9`],
    [`${root}/private/`, `${root}/private/`],
    ['test://static/resource/1', 'test://static/resource/1'],
    ['urn:isbn:0451450523', 'urn:isbn:0451450523'],
    ['https://example.com:8443/x?q=%7e#f', 'https://example.com:8443/x?q=~#f'],
    ['file:/srv/files/private/x', `${root}/private/x`],
    ['file:srv/files/private/x', `${root}/private/x`],
    ['file:////srv/files/private/x', `${root}/private/x`],
    ['file://\uFF4Cocalhost/srv/files/private/x', `${root}/private/x`],
    ['file://%6Cocalhost./srv/files/private/x', `${root}/private/x`],
    ['http:/example.com/a', 'http://example.com/a'],
    ['https://\uFF25xample.com/a', 'https://example.com/a'],
    ['collider://Notes/1', 'collider://notes/1'],
  ])('%s -> %s', (given, canonical) => {
    expect(canonicalUri(given)).toBe(canonical);
  });

  it.each([
    ['no scheme', '/srv/files/private/x'],
    ['an escaped slash', `${root}/public%2F..%2Fprivate/x`],
    ['an escaped backslash', `${root}/public%5C..%5Cprivate`],
    ['an escaped NUL', `${root}/private/x%00.txt`],
    ['a malformed escape', `${root}/%zzprivate`],
    ['a cut escape', `${root}/private%2`],
    ['a raw backslash', `${root}\\private\\x`],
    ['a control character', `${root}/private\n/x`],
  ])('refuses %s', (_what, given) => {
    expect(canonicalUri(given)).toBeUndefined();
  });

  it('is idempotent', () => {
    for (const uri of [`${root}/public/../%70rivate//x`, 'HTTPS://Example.COM./a/./b', `${root}/priv\u00e9 x`]) {
      const once = canonicalUri(uri) as string;
      expect(canonicalUri(once)).toBe(once);
    }
  });

  it('rule globs take the same spelling; a glob that is no URI stays as written', () => {
    expect(canonicalGlob('FILE://localhost/srv/files/private/*')).toBe(`${root}/private/*`);
    expect(canonicalGlob('*')).toBe('*');
  });

  it('names fold to NFKC, trimmed', () => {
    expect(foldName(' \uFF44elete_file ')).toBe('delete_file');
  });
});
