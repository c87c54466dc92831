/**
 * The suite passes wherever it is cloned (issue 31), a folder whose name has a space included:
 * a file's path comes from its URL through fileURLToPath, never `URL.pathname`, which keeps
 * `%20` (a child spawned with it finds no such file). This reads every source, test and bench file
 * and names the lines that would break under such a checkout.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FOLDERS = ['src', 'test', 'bench'];
const SKIP = new Set(['node_modules', 'results', 'fixtures-data']);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|mjs|js)$/.test(name) ? [path] : [];
  });
}

// `new URL(..., import.meta.url).pathname` and `import.meta.url` stripped of `file://` by hand.
const PATH_OF_URL = /import\.meta\.url\)\s*\.pathname|import\.meta\.url\.(replace|slice)\(/;

describe('paths of the checkout', () => {
  it('come from file URLs through fileURLToPath, so a checkout under a folder with a space works', () => {
    const offending: string[] = [];
    for (const path of FOLDERS.flatMap((folder) => files(join(ROOT, folder)))) {
      if (path === fileURLToPath(import.meta.url)) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (PATH_OF_URL.test(line)) offending.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offending).toEqual([]);
  });
});
