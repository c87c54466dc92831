import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderTemplate, createVariableSet, literal, toVariableName } from '../../../src/registry/inputs.ts';
import { serverDetailSchema, type ServerDetail } from '../../../src/registry/server-json.ts';
import { entryNameOf, RegistryEntryError, toRegistryEntry } from '../../../src/registry/to-entry.ts';
import { validateEntry } from '../../../src/registry/config-file.ts';

const fixture = (name: string): ServerDetail =>
  serverDetailSchema.parse(JSON.parse(readFileSync(new URL(`../../fixtures/registry/${name}.json`, import.meta.url), 'utf8')));

describe('registry names and variables', () => {
  it('derives a valid server name from the registry name', () => {
    expect(entryNameOf('io.github.modelcontextprotocol/everything')).toBe('everything');
    expect(entryNameOf('com.example/Weather.Server v2')).toBe('weather-server-v2');
    expect(entryNameOf('com.example/___')).toBe('server');
    expect(entryNameOf(`x/${'a'.repeat(100)}`)).toHaveLength(64);
  });

  it('derives variable names from headers, flags and hints', () => {
    expect(toVariableName('X-API-Key')).toBe('X_API_KEY');
    expect(toVariableName('--db-host')).toBe('DB_HOST');
    expect(toVariableName('1st')).toBe('V_1ST');
  });

  it('escapes a literal "${" so the config does not read it as a reference', () => {
    expect(literal('a ${b} c')).toBe('a $${b} c');
    expect(renderTemplate('x ${y} {z}', { z: { default: 'zz' } }, createVariableSet())).toBe('x $${y} zz');
  });
});

describe('server.json to an entry', () => {
  it('npm with a required repeated positional: a reference named after its hint', () => {
    const entry = toRegistryEntry(fixture('filesystem'));
    expect(entry.entry).toEqual({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem@2026.1.14', '${FILESYSTEM_ALLOWED_DIRECTORY}'] });
    expect(entry.variables).toEqual([{ name: 'FILESYSTEM_ALLOWED_DIRECTORY', description: 'A directory the server may read and write', secret: false, required: true }]);
  });

  it('OCI with a templated runtime argument: refused without --accept-runtime-args; accepted, the placeholder becomes a reference inside the fixed text', () => {
    expect(() => toRegistryEntry(fixture('filesystem'), { kind: 'oci' })).toThrow(/runtimeArguments add --mount .* beyond -e\/--env/);
    const entry = toRegistryEntry(fixture('filesystem'), { kind: 'oci', acceptRuntimeArgs: true });
    expect(entry.acceptedRuntimeArgs).toEqual(['--mount', 'type=bind,src=${FILESYSTEM_SOURCE_PATH},dst=/projects']);
    const args = entry.entry.args as string[];
    expect(args.slice(0, 3)).toEqual(['run', '--rm', '-i']);
    expect(args.slice(-4)).toEqual(['--mount', 'type=bind,src=${FILESYSTEM_SOURCE_PATH},dst=/projects', 'docker.io/mcp/filesystem:2026.1.14', '/projects']);
    expect(entry.variables.map((v) => v.name)).toEqual(['FILESYSTEM_SOURCE_PATH']);
  });

  it('a secret is always a reference, whatever value or default the document offers', () => {
    const server: ServerDetail = {
      name: 'com.example/leaky',
      packages: [{
        registryType: 'npm', identifier: 'leaky', version: '1.0.0',
        environmentVariables: [
          { name: 'API_KEY', isSecret: true, value: 'sk-live-value' },
          { name: 'OTHER_KEY', isSecret: true, default: 'sk-live-default' },
        ],
        packageArguments: [{ type: 'named', name: '--token', isSecret: true, value: 'tok-live' }],
      }],
    };
    const entry = toRegistryEntry(server);
    const text = JSON.stringify(entry.entry);
    expect(text).not.toMatch(/sk-live|tok-live/);
    expect(entry.entry.env).toEqual({ API_KEY: '${LEAKY_API_KEY}', OTHER_KEY: '${LEAKY_OTHER_KEY}' });
    expect(entry.variables.every((v) => v.secret && v.required)).toBe(true);
  });

  it('a required, non-secret input with a default is a reference with that default', () => {
    const server: ServerDetail = { name: 'a/b', packages: [{ registryType: 'npm', identifier: 'b', version: '1.0.0', environmentVariables: [{ name: 'MODE', isRequired: true, default: 'fast' }] }] };
    expect(toRegistryEntry(server).entry.env).toEqual({ MODE: '${B_MODE:-fast}' });
  });

  it('refuses a package without an exact version, a local HTTP package and a bundle', () => {
    expect(() => toRegistryEntry({ name: 'a/b', packages: [{ registryType: 'npm', identifier: 'b' }] })).toThrow(/names no exact version/);
    expect(() => toRegistryEntry({ name: 'a/b', packages: [{ registryType: 'npm', identifier: 'b', version: '1.0.0', transport: { type: 'streamable-http', url: 'http://localhost:3000/mcp' } }] })).toThrow(/runs its own streamable-http server/);
    expect(() => toRegistryEntry(fixture('bundle-only'))).toThrow(RegistryEntryError);
  });

  it('every fixture document gives an entry the config schema accepts', () => {
    for (const [name, kind] of [['everything', undefined], ['filesystem', 'oci'], ['fetch', undefined], ['github', 'oci'], ['github', 'remote'], ['weather-remote', undefined]] as const) {
      const server = fixture(name);
      const entry = toRegistryEntry(server, { kind, acceptRuntimeArgs: true });
      const withUrl = entry.kind === 'remote' && String(entry.entry.url).includes('{{') ? { ...entry, entry: { ...entry.entry, url: 'http://127.0.0.1:1/mcp' } } : entry;
      expect(() => validateEntry(withUrl, `${name}.yaml`), `${name} ${kind ?? ''}`).not.toThrow();
    }
  });
});

describe('registry naming rules', () => {
  it('accepts real identifiers and refuses options, shell text and other packages', async () => {
    const { identifierProblem } = await import('../../../src/registry/safety.ts');
    for (const [kind, id, version] of [
      ['npm', '@modelcontextprotocol/server-everything', '2026.8.31'],
      ['npm', 'left-pad', '1.3.0-rc.1+build.5'],
      ['pypi', 'mcp-server-fetch', '2025.4.7'],
      ['pypi', 'Some_Project.x', '1.0.post1'],
      ['oci', 'ghcr.io/github/github-mcp-server:0.20.1', undefined],
      ['oci', 'localhost:5000/a/b__c@sha256:' + 'a'.repeat(64), undefined],
      ['oci', 'docker.io/mcp/filesystem', '2026.1.14'],
    ] as const) {
      expect(identifierProblem(kind, id, version), `${kind} ${id}`).toBeUndefined();
    }
    for (const [kind, id, version] of [
      ['npm', '-y', '1.0.0'],
      ['npm', 'Upper', '1.0.0'],
      ['npm', 'a', 'file:../x'],
      ['npm', 'a', 'github:evil/x'],
      ['pypi', 'x', '1.0 --index-url=https://evil'],
      ['pypi', 'x$(id)', '1.0'],
      ['oci', 'image;rm', undefined],
      ['oci', 'image', '--privileged'],
      ['oci', 'UPPER/case', undefined],
    ] as const) {
      expect(identifierProblem(kind, id, version), `${kind} ${id} ${version}`).toBeDefined();
    }
  });
});
