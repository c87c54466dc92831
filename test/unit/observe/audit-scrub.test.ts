import { describe, expect, it } from 'vitest';
import { duplicateKey } from '../../../src/observe/audit/duplicate-keys.ts';
import { scrubUri } from '../../../src/observe/audit/scrub-text.ts';

describe('duplicateKey', () => {
  it('finds a key written twice at any depth, compared decoded; none in honest JSON', () => {
    expect(duplicateKey('{"a":1,"b":{"c":1,"d":"\\"c\\":2"},"e":[{"c":1},{"c":2}]}')).toBeUndefined();
    expect(duplicateKey('{"a":1,"a":2}')).toBe('a');
    expect(duplicateKey('{"a":1,"\\u0061":2}')).toBe('a');
    expect(duplicateKey('{"x":[{"k":1,"k":2}]}')).toBe('k');
    expect(duplicateKey('{"s":"a\\\\","s":1}')).toBe('s');
  });
});

describe('scrubUri', () => {
  it('replaces credential-named query values and a userinfo password, and nothing else', () => {
    expect(scrubUri('https://a.example/x?page=2&access_token=t0k&Key=k#frag')).toBe('https://a.example/x?page=2&access_token=[REDACTED]&Key=[REDACTED]#frag');
    expect(scrubUri('https://u:p4ss@a.example/')).toBe('https://u:[REDACTED]@a.example/');
    expect(scrubUri('file:///tmp/notes.txt')).toBe('file:///tmp/notes.txt');
    expect(scrubUri('s3://b/o?X-Amz-Signature=abc&X-Amz-Credential=def&monkey=1')).toBe('s3://b/o?X-Amz-Signature=[REDACTED]&X-Amz-Credential=[REDACTED]&monkey=1');
  });
});
