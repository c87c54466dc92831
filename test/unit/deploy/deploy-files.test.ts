/**
 * deploy/Dockerfile and deploy/compose.yaml are never built here (no Docker engine), so this test
 * reads both, with the config compose mounts, and checks that they agree with each other and with
 * the repository: the port, the config path, the healthcheck, the Node major, what the build
 * copies, and that nothing runs as root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfigFile } from '../../../src/config/load.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const deployDir = join(root, 'deploy');

interface Instruction {
  /** Upper-case keyword: FROM, COPY, RUN... */
  keyword: string;
  /** The rest of the line, continuations joined. */
  rest: string;
}

/** Dockerfile instructions: comments and blank lines dropped, `\` continuations joined. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (current !== '' && line.startsWith('#')) continue; // comments inside a continued instruction
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' ';
      continue;
    }
    current += line;
    const match = /^(\S+)\s*(.*)$/s.exec(current);
    if (match?.[1] !== undefined) out.push({ keyword: match[1].toUpperCase(), rest: (match[2] ?? '').trim() });
    current = '';
  }
  return out;
}

/** Arguments of ENTRYPOINT/CMD: the JSON (exec) form, or the shell form split on spaces. */
const argsOf = (rest: string): string[] => (rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/).filter(Boolean));

const dockerfile = parseDockerfile(readFileSync(join(deployDir, 'Dockerfile'), 'utf8'));
const compose = parseYaml(readFileSync(join(deployDir, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Service>;
};
interface Service {
  build: { context: string; dockerfile: string };
  command?: string[];
  volumes: Array<{ type: string; source: string; target: string; read_only?: boolean }>;
  environment: Record<string, string>;
  ports: string[];
  user?: string;
  restart: string;
  healthcheck: { test: string[]; interval: string; retries: number };
}
const [serviceName, service] = Object.entries(compose.services)[0] ?? [];
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

/** The last stage: what the image runs. */
function finalStage(): Instruction[] {
  const start = dockerfile.map((i) => i.keyword).lastIndexOf('FROM');
  return dockerfile.slice(start);
}
const last = (keyword: string) => finalStage().filter((i) => i.keyword === keyword).at(-1);
const contextDir = () => resolve(deployDir, service?.build.context ?? '.');
/** The command line the container runs: ENTRYPOINT + (compose command, else the image's CMD). */
function commandLine(): string[] {
  const entrypoint = argsOf(last('ENTRYPOINT')?.rest ?? '[]');
  return [...entrypoint, ...(service?.command ?? argsOf(last('CMD')?.rest ?? '[]'))];
}
const optionOf = (args: string[], name: string) => args[args.indexOf(name) + 1];
const healthUrl = () => new URL(/https?:\/\/[^'"\s)]+/.exec(service?.healthcheck.test.join(' ') ?? '')?.[0] ?? 'http://invalid');
const mountedConfig = () => {
  const path = optionOf(commandLine(), '--config');
  const volume = service?.volumes.find((v) => v.target === path);
  return { path, volume, source: volume ? resolve(deployDir, volume.source) : '' };
};
/** Every variable the compose file passes, with plausible values. */
const env = { SWITCHBOARD_API_KEY: 'compose-key-0123456789abcdef', SWITCHBOARD_PUBLIC_HOST: 'localhost:8080' };

describe('deploy/Dockerfile and deploy/compose.yaml', () => {
  it('compose has one service, built from the Dockerfile next to it', () => {
    expect(serviceName).toBe('switchboard');
    expect(resolve(contextDir(), service?.build.dockerfile ?? '')).toBe(join(deployDir, 'Dockerfile'));
  });

  it('every FROM is the Node major of the pinned node devDependency', () => {
    const major = /(\d+)\./.exec(pkg.devDependencies.node ?? '')?.[1];
    const froms = dockerfile.filter((i) => i.keyword === 'FROM');
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from.rest, from.rest).toMatch(new RegExp(`^node:${major}[-.\\s]`));
  });

  it('the files the build COPYs exist in the context and are not in .dockerignore', () => {
    const ignored = readFileSync(join(contextDir(), '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const copies = dockerfile.filter((i) => i.keyword === 'COPY' && !i.rest.startsWith('--from='));
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const sources = copy.rest.split(/\s+/).filter((w) => !w.startsWith('--')).slice(0, -1);
      for (const source of sources) {
        expect(existsSync(join(contextDir(), source)), `COPY ${source}`).toBe(true);
        expect(ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)), `${source} is ignored`).toBe(false);
      }
    }
  });

  it('the image runs dist/cli.js, which the build stage produces from src/', () => {
    expect(commandLine()).toContain('dist/cli.js');
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect([build.compilerOptions.outDir, build.compilerOptions.rootDir]).toEqual(['dist', 'src']);
    expect(existsSync(join(root, 'src', 'cli.ts'))).toBe(true);
  });

  it('nothing runs as root: the final stage has USER, and compose does not override it with root', () => {
    const user = last('USER')?.rest;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    if (service?.user !== undefined) expect(service.user).not.toMatch(/^(root|0)(:|$)/);
  });

  it('one port everywhere: EXPOSE, the published container port, the healthcheck and the config', async () => {
    const exposed = Number(last('EXPOSE')?.rest.split('/')[0]);
    expect(exposed).toBeGreaterThan(0);
    const published = service?.ports.map((p) => Number(p.split(':').at(-1)));
    expect(published).toEqual([exposed]);
    expect(Number(healthUrl().port)).toBe(exposed);
    const config = await loadConfigFile(mountedConfig().source, { env });
    expect(config.listen.port).toBe(exposed);
  });

  it('the CMD --config is the mount target of a config file in the repository, mounted read-only', async () => {
    const { path, volume, source } = mountedConfig();
    expect(path).toMatch(/^\//);
    expect(volume, `no volume mounts ${path}`).toBeDefined();
    expect(volume?.read_only).toBe(true);
    expect(existsSync(source)).toBe(true);
    const config = await loadConfigFile(source, { env });
    expect(config.targets.size).toBeGreaterThan(0);
  });

  it('bound on 0.0.0.0 inside the container, so the mounted config turns client authentication on', async () => {
    expect(optionOf(commandLine(), '--host')).toBe('0.0.0.0');
    const config = await loadConfigFile(mountedConfig().source, { env });
    expect(config.auth).toBeDefined();
    expect(config.auth?.anonymous).toBe(false);
    // The key comes from the environment compose requires, never from the file.
    expect(service?.environment.SWITCHBOARD_API_KEY).toMatch(/^\$\{SWITCHBOARD_API_KEY:\?/);
    // Published on the host's loopback only.
    for (const port of service?.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it('the healthcheck calls /healthz, which answers without a credential, and restarts are on', () => {
    expect(service?.healthcheck.test[0]).toBe('CMD');
    expect(healthUrl().pathname).toBe('/healthz');
    expect(['127.0.0.1', 'localhost']).toContain(healthUrl().hostname);
    expect(service?.healthcheck.retries).toBeGreaterThan(0);
    expect(['unless-stopped', 'always', 'on-failure']).toContain(service?.restart.split(':')[0]);
  });
});

describe('parseDockerfile', () => {
  it('joins continuations and drops comments', () => {
    expect(parseDockerfile('# c\nFROM a AS b\nRUN x \\\n # inside\n && y\n\nUSER node\n')).toEqual([
      { keyword: 'FROM', rest: 'a AS b' },
      { keyword: 'RUN', rest: 'x  && y' },
      { keyword: 'USER', rest: 'node' },
    ]);
  });
});
