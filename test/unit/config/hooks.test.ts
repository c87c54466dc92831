/**
 * `mcpServers.<name>.hooks` and `.redact`: defaults, strictness, and the refusals that keep a
 * misconfigured guardrail from loading quietly.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.ts';
import type { GatewayConfig } from '../../../src/config/types.ts';

const parse = (server: Record<string, unknown>): GatewayConfig => parseConfig({ mcpServers: { s: { command: 'x', ...server } } }, { env: {}, baseDir: '/srv' });

describe('hooks and redact config', () => {
  it('a server without them carries neither (the call path checks for absence)', () => {
    const target = parse({}).targets.get('s');
    expect(target?.hooks).toBeUndefined();
    expect(target?.redact).toBeUndefined();
  });

  it('fills a hook\'s defaults: tools/call, request phase, 2 s, closed, unsigned', () => {
    expect(parse({ hooks: [{ url: 'https://guard.example/hook' }] }).targets.get('s')?.hooks).toEqual([
      { url: 'https://guard.example/hook', methods: ['tools/call'], phase: 'request', timeoutMs: 2000, failureMode: 'closed', maxConcurrent: 64, maxAnswerBytes: 4 * 1024 * 1024 },
    ]);
  });

  it('an empty redact block turns the built-in patterns on', () => {
    expect(parse({ redact: {} }).targets.get('s')?.redact).toEqual({ secrets: true, patterns: [], marker: '[REDACTED]' });
  });

  it.each([
    [{ hooks: [{ url: 'https://g/h', verb: 'POST' }] }, 'verb'],
    [{ hooks: [{ url: 'https://user:pw@g/h' }] }, 'user:password'],
    [{ hooks: [{ url: 'ftp://g/h' }] }, 'http'],
    [{ hooks: [{ url: 'https://g/h', phase: 'after' }] }, 'request'],
    [{ hooks: [{ url: 'https://g/h', failureMode: 'maybe' }] }, 'open'],
    [{ hooks: [{ url: 'https://g/h', secret: 'short' }] }, '16 characters'],
    [{ hooks: [{ url: 'https://g/h', methods: [] }] }, 'at least one'],
    [{ redact: { patterns: ['(unclosed'] } }, 'regular expression'],
    [{ redact: { secret: true } }, 'secret'],
  ])('refuses %j', (server, words) => {
    expect(() => parse(server)).toThrow(words);
  });

  it('a secret that fails validation is not echoed in the error', () => {
    let message = '';
    try {
      parse({ hooks: [{ url: 'https://g/h', secret: 'tiny-secret' }] });
    } catch (err) {
      message = String((err as Error).message);
    }
    expect(message).toContain('secret');
    expect(message).not.toContain('tiny-secret');
  });
});
