/** Finding a program as a shell would (without running one): on the given PATH, executable, a file. */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The path of `name` (as given when it has a `/`), or undefined when it is nowhere on `pathVar`. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
