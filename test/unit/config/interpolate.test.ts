import { describe, expect, it } from 'vitest';
import { interpolate, interpolateString } from '../../../src/config/interpolate.ts';

const env = { HOME: '/home/ada', EMPTY: '', PORT: '9000', TOKEN: 's3cret' };
const str = (text: string, lenient = false) => interpolateString(text, { env, lenient });

describe('interpolateString', () => {
  it('leaves text without references untouched', () => {
    expect(str('plain text')).toBe('plain text');
    expect(str('')).toBe('');
  });

  it('substitutes ${VAR} anywhere in the string, several times', () => {
    expect(str('${HOME}')).toBe('/home/ada');
    expect(str('dir=${HOME}/x port=${PORT}')).toBe('dir=/home/ada/x port=9000');
  });

  it('substitutes a set but empty variable as empty', () => {
    expect(str('[${EMPTY}]')).toBe('[]');
  });

  it('uses the default of ${VAR:-default} when the variable is unset or empty, like sh', () => {
    expect(str('${NOPE:-8080}')).toBe('8080');
    expect(str('${EMPTY:-fallback}')).toBe('fallback');
    expect(str('${PORT:-8080}')).toBe('9000');
    expect(str('${NOPE:-}')).toBe('');
    expect(str('${NOPE:-a b:c-d}')).toBe('a b:c-d');
  });

  it('treats $${ as a literal ${ and does not expand what follows', () => {
    expect(str('$${HOME}')).toBe('${HOME}');
    expect(str('a $${ b')).toBe('a ${ b');
    expect(str('$${HOME} and ${HOME}')).toBe('${HOME} and /home/ada');
  });

  it('keeps a $ that does not start a reference', () => {
    expect(str('cost: $5')).toBe('cost: $5');
    expect(str('$HOME')).toBe('$HOME');
    expect(str('trailing $')).toBe('trailing $');
    expect(str('$$')).toBe('$$');
  });

  it('does not scan substituted values again', () => {
    expect(interpolateString('${X}', { env: { X: '${TOKEN}' } })).toBe('${TOKEN}');
  });

  it('reports an unset variable without default, naming it', () => {
    const result = str('Bearer ${GITHUB_TOKEN}');
    expect(result).toEqual({ error: expect.stringContaining('environment variable GITHUB_TOKEN is not set') });
  });

  it('leaves an unset variable as written in lenient mode', () => {
    expect(str('Bearer ${GITHUB_TOKEN}', true)).toBe('Bearer ${GITHUB_TOKEN}');
    expect(str('${GITHUB_TOKEN:-x}', true)).toBe('x');
  });

  it('rejects malformed references', () => {
    expect(str('${HOME')).toEqual({ error: expect.stringContaining('unterminated') });
    expect(str('${}')).toEqual({ error: expect.stringContaining('invalid variable reference "${}"') });
    expect(str('${1X}')).toEqual({ error: expect.stringContaining('invalid variable reference') });
    expect(str('${A-B}')).toEqual({ error: expect.stringContaining('invalid variable reference') });
    expect(str('${A:?x}')).toEqual({ error: expect.stringContaining('invalid variable reference') });
  });

  it('rejects nested references in a default instead of half-expanding them', () => {
    expect(str('${A:-${B}}')).toEqual({ error: expect.stringContaining('nested') });
  });
});

describe('interpolate (trees)', () => {
  it('interpolates strings at every depth and leaves other scalars and keys alone', () => {
    const input = { '${HOME}': 'k', a: ['${PORT}', 1, true, null, { b: '${TOKEN}' }] };
    const { value, issues } = interpolate(input, { env });
    expect(issues).toEqual([]);
    expect(value).toEqual({ '${HOME}': 'k', a: ['9000', 1, true, null, { b: 's3cret' }] });
  });

  it('does not modify its input', () => {
    const input = { a: '${HOME}' };
    interpolate(input, { env });
    expect(input.a).toBe('${HOME}');
  });

  it('collects every problem with its key path', () => {
    const input = { mcpServers: { gh: { env: { TOKEN: '${GH_TOKEN}' }, args: ['ok', '${NOPE}'] } } };
    const { issues } = interpolate(input, { env });
    expect(issues.map((issue) => issue.path)).toEqual(['mcpServers.gh.env.TOKEN', 'mcpServers.gh.args[1]']);
    expect(issues[0]?.message).toContain('GH_TOKEN');
    expect(issues[1]?.message).toContain('NOPE');
  });

  it('prefixes the starting path', () => {
    const { issues } = interpolate('${NOPE}', { env }, ['gateway', 'host']);
    expect(issues[0]?.path).toBe('gateway.host');
  });

  it('keeps a __proto__ key as plain data', () => {
    const input = JSON.parse('{"__proto__": {"polluted": "${HOME}"}}') as unknown;
    const { value } = interpolate(input, { env });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.hasOwn(value as object, '__proto__')).toBe(true);
  });
});
