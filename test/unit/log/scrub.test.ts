import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.ts';
import { MIN_SECRET_CHARS, scrubbingLogger, scrubObject, scrubText, SECRET_MARK } from '../../../src/log/scrub.ts';
import { targetSecrets } from '../../../src/upstream/secrets.ts';

describe('scrubbing secrets from log lines', () => {
  it('replaces every occurrence, longest first; short values are not searched', () => {
    expect(scrubText('a=hunter22 b=hunter22!', ['hunter22'])).toBe(`a=${SECRET_MARK} b=${SECRET_MARK}!`);
    expect(scrubText('x=1 on', ['1', 'on'])).toBe('x=1 on');
    expect('x'.repeat(MIN_SECRET_CHARS)).toHaveLength(MIN_SECRET_CHARS);
  });

  it('walks nested objects, arrays and errors without changing the original', () => {
    const err = Object.assign(new Error('boom s3cr3t-value'), { internal: { stderr: ['line s3cr3t-value'] } });
    const object = { a: 's3cr3t-value', b: [{ c: 'x s3cr3t-value' }], err, n: 3 };
    const out = scrubObject(object, ['s3cr3t-value']) as Record<string, any>;
    expect(JSON.stringify(out)).not.toContain('s3cr3t-value');
    expect(out.err.message).toBe(`boom ${SECRET_MARK}`);
    expect(out.err.internal.stderr).toEqual([`line ${SECRET_MARK}`]);
    expect(object.a).toBe('s3cr3t-value');
    expect(scrubObject(object, [])).toBe(object);
  });

  it("a scrubbing child logger and its children write no secret, read when the line is written", () => {
    const lines: string[] = [];
    const root = createLogger({ level: 'info', destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }) });
    let secrets = ['first-secret'];
    const log = scrubbingLogger(root, () => secrets).child({ upstreamPid: 1 });
    log.info({ stderr: 'first-secret second-secret' }, 'upstream stderr');
    secrets = ['second-secret'];
    log.info({ stderr: 'second-secret' }, 'upstream stderr');
    expect(lines[0]).toContain(`"stderr":"${SECRET_MARK} second-secret"`);
    expect(lines[1]).toContain(`"stderr":"${SECRET_MARK}"`);
    expect(lines[0]).toContain('"name":"switchboard"');
  });

  it('scrubs the message text too: a given msg, format arguments, and the message pino takes from an Error', () => {
    const lines: string[] = [];
    const root = createLogger({ level: 'info', destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }) });
    const log = scrubbingLogger(root, () => ['msg-secret-123']).child({ upstreamPid: 2 });
    log.warn('upstream said msg-secret-123');
    log.warn({ target: 't' }, 'upstream quoted %s', 'msg-secret-123');
    log.error(new Error('boom msg-secret-123'));
    log.error({ err: new Error('crash msg-secret-123') });
    log.info({ err: new Error('x'), msg: 'own' });
    expect(lines).toHaveLength(5);
    for (const line of lines.slice(0, 4)) expect(JSON.parse(line).msg).toContain(SECRET_MARK);
    expect(lines.join('')).not.toContain('msg-secret-123');
    expect(JSON.parse(lines[2]!).msg).toBe(`boom ${SECRET_MARK}`);
    expect(JSON.parse(lines[4]!).msg).toBe('own');
  });

  it("a target's secrets: env values; header values and their credentials part; the exchange's client secret", () => {
    expect(targetSecrets({ type: 'stdio', env: { A: 'token-aaaaaa', B: 'x' } } as never)).toEqual(['token-aaaaaa', 'x']);
    const remote = targetSecrets({ type: 'http', headers: { authorization: 'Bearer abcdefgh', 'x-k': 'key-123456' }, tokenExchange: { clientSecret: 'client-secret-1' } } as never);
    expect([...remote].sort()).toEqual(['Bearer abcdefgh', 'abcdefgh', 'client-secret-1', 'key-123456']);
    expect(remote.map((v) => v.length)).toEqual(remote.map((v) => v.length).sort((a, b) => b - a));
  });
});
