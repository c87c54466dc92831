import { describe, expect, it } from 'vitest';
import { formatLine } from '../../../src/log/pretty.ts';

describe('terminal log lines', () => {
  it('time, level and message first, then the fields; no colour codes without colour', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 1, 12, 4, 5), name: 'switchboard', msg: 'hello', target: 'fs', n: 3 });
    const text = formatLine(line, false);
    expect(text).toMatch(/^\d{2}:\d{2}:\d{2} WARN  hello  target=fs n=3$/);
    expect(formatLine(line, true)).toContain('\x1b[33mWARN');
  });

  it('shortens long values and leaves a non-JSON line as it is', () => {
    expect(formatLine(JSON.stringify({ level: 30, msg: 'm', big: 'x'.repeat(500) }), false)).toContain(`big=${'x'.repeat(160)}...`);
    expect(formatLine('not json', false)).toBe('not json');
  });
});
