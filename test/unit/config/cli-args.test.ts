import { describe, expect, it } from 'vitest';
import { parseCliArgs, USAGE } from '../../../src/config/cli-args.ts';
import { isConfigError } from '../../../src/config/config-error.ts';
import { LOG_LEVELS } from '../../../src/config/schema.ts';

function usageError(argv: string[]): string {
  try {
    parseCliArgs(argv);
  } catch (error) {
    if (isConfigError(error)) return error.message;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(argv)}`);
}

describe('parseCliArgs', () => {
  it('runs the built-in default with no arguments', () => {
    expect(parseCliArgs([])).toEqual({ kind: 'run', source: { kind: 'default' }, overrides: {} });
  });

  it('reads --config / -c / --config=', () => {
    for (const argv of [['--config', 'a.yaml'], ['-c', 'a.yaml'], ['--config=a.yaml']]) {
      expect(parseCliArgs(argv)).toEqual({ kind: 'run', source: { kind: 'file', path: 'a.yaml' }, overrides: {} });
    }
  });

  it('collects --host, --port and --log-level as overrides', () => {
    expect(parseCliArgs(['--config', 'a.json', '--host', '0.0.0.0', '--port=0', '--log-level', 'debug'])).toEqual({
      kind: 'run',
      source: { kind: 'file', path: 'a.json' },
      overrides: { host: '0.0.0.0', port: 0, logLevel: 'debug' },
    });
    expect(parseCliArgs(['--port', '65535'])).toMatchObject({ overrides: { port: 65_535 } });
    for (const level of LOG_LEVELS) expect(parseCliArgs(['--log-level', level])).toMatchObject({ overrides: { logLevel: level } });
  });

  it('lets the last of a repeated flag win', () => {
    expect(parseCliArgs(['--port', '1', '--port', '2'])).toMatchObject({ overrides: { port: 2 } });
  });

  it('takes everything after -- as the command, flags included', () => {
    expect(parseCliArgs(['--port', '3000', '--', 'npx', '-y', '@scope/server', '--port', '9', '--'])).toEqual({
      kind: 'run',
      source: { kind: 'quick', command: 'npx', args: ['-y', '@scope/server', '--port', '9', '--'], env: {}, headers: {} },
      overrides: { port: 3000 },
    });
    expect(parseCliArgs(['--', 'server'])).toMatchObject({ source: { kind: 'quick', command: 'server', args: [] } });
  });

  it('returns help and version, help first', () => {
    expect(parseCliArgs(['--help'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['-h', '--config', 'x.yaml'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['--version'])).toEqual({ kind: 'version' });
    expect(parseCliArgs(['-v'])).toEqual({ kind: 'version' });
    expect(parseCliArgs(['--version', '--help'])).toEqual({ kind: 'help' });
  });

  it('rejects unknown options, by the name written', () => {
    expect(usageError(['--bogus'])).toBe('--bogus: unknown option (see --help)');
    expect(usageError(['--bogus=1'])).toBe('--bogus: unknown option (see --help)');
    expect(usageError(['-x'])).toBe('-x: unknown option (see --help)');
    expect(usageError(['--help', '--prot', '1'])).toBe('--prot: unknown option (see --help)');
  });

  it('rejects a missing value, including when the next word is another flag', () => {
    expect(usageError(['--config'])).toMatch(/^--config: missing value/);
    expect(usageError(['--port', '--help'])).toMatch(/^--port: missing value/);
    expect(usageError(['--host', '--', 'x'])).toMatch(/^--host: missing value/);
    expect(usageError(['--config='])).toBe('--config: must not be empty');
    expect(usageError(['--host='])).toBe('--host: must not be empty');
  });

  it('rejects values on boolean flags', () => {
    expect(usageError(['--help=yes'])).toBe('--help: takes no value');
  });

  it('validates --port and --log-level', () => {
    for (const port of ['65536', '-1', '80.5', 'http', '', ' 80', '1e3']) {
      expect(usageError([`--port=${port}`])).toBe('--port: expected an integer from 0 to 65535');
    }
    expect(usageError(['--log-level', 'verbose'])).toBe(`--log-level: expected one of ${LOG_LEVELS.join(', ')}`);
  });

  it('rejects stray arguments before --, pointing at quick mode', () => {
    expect(usageError(['npx', 'server'])).toMatch(/^unexpected argument "npx": put the server command after --/);
  });

  it('rejects -- without a command, and --config together with a command', () => {
    expect(usageError(['--'])).toBe('--: expected a command after --');
    expect(usageError(['--', ''])).toBe('--: the command after -- must not be empty');
    expect(usageError(['--config', 'a.yaml', '--', 'npx'])).toBe('--config: cannot be combined with a command after --');
  });
});

describe('USAGE', () => {
  it('mentions every option', () => {
    for (const flag of ['--config', '-c', '--host', '--port', '--log-level', '--help', '-h', '--version', '-v', '--']) {
      expect(USAGE).toContain(flag);
    }
  });
});

describe('first-hour options', () => {
  it('-e KEY=VALUE sets, -e KEY passes from the environment, an unset KEY is named', () => {
    const command = parseCliArgs(['-e', 'A=1', '--env', 'B', '-e', 'C=x=y', '--', 'srv'], { B: 'from-env' });
    expect(command).toMatchObject({ kind: 'run', source: { kind: 'quick', command: 'srv', env: { A: '1', B: 'from-env', C: 'x=y' } } });
    expect(() => parseCliArgs(['-e', 'MISSING', '--', 'srv'], {})).toThrow(/MISSING is not set in this environment/);
    expect(() => parseCliArgs(['-e', '1BAD=x', '--', 'srv'], {})).toThrow(/not a variable name/);
    expect(() => parseCliArgs(['-e', 'A=1'], {})).toThrow(/quick mode only/);
  });

  it('--header for a URL; --stdio splits like a shell; -V prints the version', () => {
    expect(parseCliArgs(['--header', 'Authorization: Bearer t', '--', 'https://mcp.example.com/mcp'])).toMatchObject({
      source: { kind: 'quick', command: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
    });
    expect(() => parseCliArgs(['--header', 'no-colon', '--', 'https://x.example/mcp'])).toThrow(/Name: value/);
    expect(parseCliArgs(['--stdio', `npx -y "@scope/pkg" '/a dir'`])).toMatchObject({
      source: { kind: 'quick', command: 'npx', args: ['-y', '@scope/pkg', '/a dir'] },
    });
    expect(() => parseCliArgs(['--stdio', 'a', '--', 'b'])).toThrow(/--stdio/);
    expect(parseCliArgs(['-V'])).toEqual({ kind: 'version' });
    expect(parseCliArgs(['--cors', 'https://a.example', '--cors', '*'])).toMatchObject({ overrides: { cors: ['https://a.example', '*'] } });
    expect(() => parseCliArgs(['--cors', 'https://a.example/path'])).toThrow(/--cors: expected an origin/);
  });

  it('validate <file> takes the file as its argument', () => {
    expect(parseCliArgs(['validate', 'x.yaml'])).toMatchObject({ kind: 'validate', source: { kind: 'file', path: 'x.yaml' } });
    expect(() => parseCliArgs(['validate'])).toThrow(/switchboard validate <file>/);
  });
});
