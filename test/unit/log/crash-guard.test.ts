import { afterEach, describe, expect, it } from 'vitest';
import { installCrashGuard, type CrashGuard } from '../../../src/log/crash-guard.ts';
import { createTestLogger } from '../../support/gateway.ts';

let guard: CrashGuard | undefined;
const emit = process.emit.bind(process) as (event: string, ...args: unknown[]) => boolean;
afterEach(() => guard?.uninstall());

describe('crash guard', () => {
  it('logs an uncaught exception and an unhandled rejection with a correlation id, and keeps the process', () => {
    const lines: string[] = [];
    const exits: number[] = [];
    guard = installCrashGuard({ logger: createTestLogger('info', lines), exit: (code) => exits.push(code) });
    emit('uncaughtException', new Error('boom in one path'), 'uncaughtException');
    emit('unhandledRejection', new Error('lost promise'), Promise.resolve());
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; correlationId: string; err: { message: string } });
    expect(logged.map((l) => l.err.message)).toEqual(['boom in one path', 'lost promise']);
    expect(logged.every((l) => /^[0-9a-f-]{36}$/.test(l.correlationId) && l.msg.includes('keeps serving'))).toBe(true);
    expect(exits).toEqual([]);
  });

  it('exits with 70 once more errors than the limit arrive within a minute', () => {
    const lines: string[] = [];
    const exits: number[] = [];
    guard = installCrashGuard({ logger: createTestLogger('info', lines), maxPerMinute: 3, exit: (code) => exits.push(code) });
    for (let i = 0; i < 4; i++) emit('uncaughtException', new Error(`loop ${i}`), 'uncaughtException');
    expect(exits).toEqual([70]);
    expect(lines.at(-1)).toContain('too many uncaught errors');
  });
});
