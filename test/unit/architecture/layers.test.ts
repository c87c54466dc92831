/**
 * Dependency direction (docs/architecture.md): a layer imports only layers below it, and only
 * transport/ touches child_process, undici or ws; only http/ imports fastify; only the composition
 * root reaches the OpenTelemetry SDK (through telemetry/sdk.ts), everything else the API alone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

// Lowest first. `log` and `config` types are shared vocabulary: everyone may use them.
const ORDER = ['jsonrpc', 'errors', 'log', 'config', 'registry', 'telemetry', 'transport', 'cluster', 'upstream', 'router', 'governance', 'session', 'auth', 'observe', 'http'];
const SHARED = new Set(['log', 'config']);
const ROOT_FILES = new Set(['main.ts', 'cli.ts']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function layerOf(path: string): string {
  return relative(SRC, path).split('/')[0]!;
}

const sources = files(SRC).map((path) => ({ path, layer: layerOf(path), text: readFileSync(path, 'utf8') }));
// Static imports and re-exports, and dynamic `import('...')` (a lazily loaded module is still a dependency).
const importsOf = (text: string) => [
  ...[...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!),
  ...[...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
];

describe('layers', () => {
  it('knows every folder under src/', () => {
    for (const { layer } of sources) if (!ROOT_FILES.has(layer)) expect(ORDER).toContain(layer);
  });

  it('no module imports a layer above its own, and nothing but the other entry point imports main.ts or cli.ts', () => {
    const violations: string[] = [];
    for (const { path, layer, text } of sources) {
      for (const spec of importsOf(text)) {
        if (!spec.startsWith('.')) continue;
        const target = join(path, '..', spec);
        const targetLayer = layerOf(target);
        if (ROOT_FILES.has(targetLayer) && !ROOT_FILES.has(layer)) {
          violations.push(`${relative(SRC, path)} imports ${targetLayer}`);
          continue;
        }
        if (ROOT_FILES.has(layer) || targetLayer === layer) continue;
        if (SHARED.has(targetLayer) && layer !== 'jsonrpc' && layer !== 'errors') continue;
        if (ORDER.indexOf(targetLayer) > ORDER.indexOf(layer)) violations.push(`${relative(SRC, path)} (${layer}) imports ${targetLayer}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('only transport/ touches child_process, undici or ws; only http/ imports fastify; only cluster/ imports ioredis', () => {
    const violations: string[] = [];
    for (const { path, layer, text } of sources) {
      for (const spec of importsOf(text)) {
        const wire = /^(node:)?child_process$|^undici$|^ws$/.test(spec);
        const web = /^fastify$|^@fastify\//.test(spec);
        if (wire && layer !== 'transport') violations.push(`${relative(SRC, path)} imports ${spec}`);
        if (web && layer !== 'http') violations.push(`${relative(SRC, path)} imports ${spec}`);
        if (spec === 'ioredis' && layer !== 'cluster') violations.push(`${relative(SRC, path)} imports ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('only telemetry/sdk.ts imports the OpenTelemetry SDK, and only main.ts imports telemetry/sdk.ts', () => {
    const violations: string[] = [];
    for (const { path, text } of sources) {
      const file = relative(SRC, path);
      for (const spec of importsOf(text)) {
        const sdk = spec.startsWith('@opentelemetry/') && spec !== '@opentelemetry/api';
        if (sdk && file !== 'telemetry/sdk.ts') violations.push(`${file} imports ${spec}`);
        if (spec.endsWith('/sdk.ts') && relative(SRC, join(path, '..', spec)) === 'telemetry/sdk.ts' && file !== 'main.ts') {
          violations.push(`${file} imports telemetry/sdk.ts`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('no two source files import each other, directly or around a loop (type-only imports count)', () => {
    const graph = new Map<string, string[]>();
    for (const { path, text } of sources) {
      const deps = importsOf(text).filter((spec) => spec.startsWith('.')).map((spec) => relative(SRC, join(path, '..', spec)));
      graph.set(relative(SRC, path), deps);
    }
    expect(findCycles(graph)).toEqual([]);
  });

  it('finds a loop when there is one (the check itself can fail)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(findCycles(graph)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts']);
  });
});

/** Every import loop, once each, as `a -> b -> a` (depth-first search with a path stack). */
function findCycles(graph: Map<string, string[]>): string[] {
  const done = new Set<string>();
  const onPath: string[] = [];
  const found: string[] = [];
  const visit = (node: string) => {
    const at = onPath.indexOf(node);
    if (at >= 0) return void found.push([...onPath.slice(at), node].join(' -> '));
    if (done.has(node)) return;
    onPath.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    onPath.pop();
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) visit(node);
  return found;
}

