/**
 * The pure parts of the guardrails: what a hook may answer (session/hooks/answer.ts), the signature
 * (signature.ts) and the redaction guard (redact.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseHookAnswer } from '../../../../src/session/hooks/answer.ts';
import { createRedactor } from '../../../../src/session/hooks/redact.ts';
import { signHookBody, verifyHookSignature } from '../../../../src/session/hooks/signature.ts';

describe('parseHookAnswer', () => {
  const params = { name: 'echo', arguments: { text: 'x' } };
  it('takes allow, deny (reason cleaned and bounded) and valid replacements', () => {
    expect(parseHookAnswer({ action: 'allow', extra: 1 }, 'request', 'tools/call', params)).toEqual({ action: 'allow' });
    expect(parseHookAnswer({ action: 'deny', reason: 'bad\nthing\u0000' }, 'request', 'tools/call', params)).toEqual({ action: 'deny', reason: 'bad thing' });
    expect(parseHookAnswer({ action: 'deny' }, 'request', 'tools/call', params)).toEqual({ action: 'deny', reason: 'no reason given' });
    expect((parseHookAnswer({ action: 'deny', reason: 'r'.repeat(2000) }, 'response', 'tools/call', params) as { reason: string }).reason).toHaveLength(500);
    expect(parseHookAnswer({ action: 'modify', params: { name: 'echo', arguments: {} } }, 'request', 'tools/call', params)).toEqual({ action: 'modify', value: { name: 'echo', arguments: {} } });
    expect(parseHookAnswer({ action: 'modify', result: { content: [], isError: true } }, 'response', 'tools/call', params)).toMatchObject({ action: 'modify' });
    expect(parseHookAnswer({ action: 'modify', params: { uri: 'file:///a' } }, 'request', 'resources/read', { uri: 'file:///a' })).toMatchObject({ action: 'modify' });
  });

  it.each([
    [null, 'request'],
    [[], 'request'],
    [{ action: 'ALLOW' }, 'request'],
    [{ action: 'modify' }, 'request'],
    [{ action: 'modify', params: { name: 'other' } }, 'request'],
    [{ action: 'modify', params: { arguments: {} } }, 'request'],
    [{ action: 'modify', result: { content: 'text' } }, 'response'],
    [{ action: 'modify', result: { content: [{ text: 'no type' }] } }, 'response'],
    [{ action: 'modify', result: { content: [], isError: 'yes' } }, 'response'],
    [{ action: 'modify', result: { content: [], structuredContent: [1] } }, 'response'],
    [{ action: 'modify', params: { name: 'echo' } }, 'response'],
  ] as const)('refuses %j in the %s phase', (answer, phase) => {
    expect(typeof parseHookAnswer(answer, phase, 'tools/call', params)).toBe('string');
  });
});

describe('hook signatures', () => {
  const secret = 'a-secret-of-some-length';
  const body = '{"phase":"request"}';
  it('verifies its own signature and nothing altered', () => {
    const header = signHookBody(secret, body, 1_700_000_000);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyHookSignature(header, body, secret, 1_700_000_010)).toBe(true);
    expect(verifyHookSignature(header, `${body} `, secret, 1_700_000_010)).toBe(false);
    expect(verifyHookSignature(header, body, `${secret}x`, 1_700_000_010)).toBe(false);
    expect(verifyHookSignature(header.replace('t=1700000000', 't=1700000001'), body, secret, 1_700_000_010)).toBe(false);
    expect(verifyHookSignature(header, body, secret, 1_700_000_000 + 301)).toBe(false);
    expect(verifyHookSignature(undefined, body, secret)).toBe(false);
    expect(verifyHookSignature('t=1,v1=zz', body, secret)).toBe(false);
  });
});

describe('the redaction guard', () => {
  const redact = createRedactor({ secrets: true, patterns: ['acct-[0-9]{4}'], marker: '<x>' })!;
  it.each([
    ['-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----'],
    ['-----BEGIN OPENSSH PRIVATE KEY-----\ncut short'],
    ['AKIAIOSFODNN7EXAMPLE'],
    ['ASIAY34FZKBOKMUTVV7A'],
    ['AIzaSyA-1234567890abcdefghijklmnopqrstu'],
    ['xoxb-123456789012-abcdefghijkl'],
    ['ghp_' + 'a'.repeat(36)],
    ['github_pat_' + 'B'.repeat(40)],
    ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig'],
    ['acct-1234'],
  ])('replaces %s', (secret) => {
    const result = { content: [{ type: 'text', text: `before ${secret} after` }] };
    expect(redact(result)).toBeGreaterThan(0);
    expect(result.content[0]?.text).not.toContain(secret.slice(-12));
    expect(result.content[0]?.text).toContain('<x>');
  });

  it('rewrites text blocks, embedded resources and structuredContent strings; leaves the rest', () => {
    const result = {
      content: [
        { type: 'text', text: 'AKIAIOSFODNN7EXAMPLE' },
        { type: 'image', data: 'AKIAIOSFODNN7EXAMPLE', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///k', text: 'acct-9999' } },
      ],
      structuredContent: { nested: [{ token: 'acct-0001' }], n: 3 },
    };
    expect(redact(result)).toBe(3);
    expect(result).toEqual({
      content: [
        { type: 'text', text: '<x>' },
        { type: 'image', data: 'AKIAIOSFODNN7EXAMPLE', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///k', text: '<x>' } },
      ],
      structuredContent: { nested: [{ token: '<x>' }], n: 3 },
    });
  });

  it('plain text passes untouched; no patterns at all is no redactor', () => {
    const result = { content: [{ type: 'text', text: 'a bearer of good news, AKIA short' }] };
    expect(redact(result)).toBe(0);
    expect(result.content[0]?.text).toBe('a bearer of good news, AKIA short');
    expect(createRedactor({ secrets: false, patterns: [], marker: 'x' })).toBeUndefined();
  });
});
