/**
 * Server names other clients write that cannot be a Switchboard target name (it becomes a URL path
 * segment): Cline names what it installs from its marketplace after the repository path
 * (`github.com/modelcontextprotocol/servers/tree/main/src/everything`), others allow dots and spaces.
 * Each gets a valid name derived from it, the same on every start (it depends only on the file),
 * unique in the file, and never one a server of the file already has.
 *
 * A repository path is served under its last meaningful segment (`everything`); when that is taken,
 * under more of the path (`src-everything`, ...), then with a number (`everything-2`). Anything
 * else: the name with every run of other characters turned into `-`.
 */
import { TARGET_NAME_PATTERN } from './schema-kit.ts';

/** Path segments that say where in a repository, not what: skipped while a segment that names something is left. */
const PATH_NOISE = new Set(['tree', 'blob', 'main', 'master', 'head', 'src', 'packages', 'servers', 'server', 'mcp', 'mcp-server']);
/** The name used when nothing of the original is left (only punctuation). */
const FALLBACK = 'server';
const MAX = 64;

/** Letters, digits, `_` and `-` only, no separator at either end, at most `MAX` (the end kept: it names the server). */
function clean(text: string): string {
  const dashed = text.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^[-_]+|[-_]+$/g, '');
  return dashed.length <= MAX ? dashed : dashed.slice(-MAX).replace(/^[-_]+/, '');
}

/** The names to try for one invalid name, best first. */
export function candidateNames(name: string): string[] {
  if (!name.includes('/')) {
    const cleaned = clean(name);
    return [TARGET_NAME_PATTERN.test(cleaned) ? cleaned : FALLBACK];
  }
  const raw = name.split('/').filter((s) => s.trim() !== '');
  // A leading host (github.com, gitlab.example.org) names no server.
  if (raw.length > 1 && raw[0]?.includes('.') === true) raw.shift();
  const segments = raw.map((s) => clean(s.replace(/\.git$/i, ''))).filter((s) => s !== '');
  const meaningful = segments.filter((s) => !PATH_NOISE.has(s.toLowerCase()));
  const parts = meaningful.length > 0 ? meaningful : segments;
  const candidates: string[] = [];
  for (let k = 1; k <= parts.length; k++) {
    const candidate = clean(parts.slice(-k).join('-'));
    if (TARGET_NAME_PATTERN.test(candidate) && !candidates.includes(candidate)) candidates.push(candidate);
  }
  return candidates.length > 0 ? candidates : [FALLBACK];
}

/**
 * For every name of `names` that is not a valid target name, the valid one it is served under.
 * Valid names keep themselves and are claimed first, so a derived name never takes one of them.
 */
export function deriveServerNames(names: readonly string[]): Map<string, string> {
  const taken = new Set(names.filter((n) => TARGET_NAME_PATTERN.test(n)));
  const derived = new Map<string, string>();
  for (const name of names) {
    if (TARGET_NAME_PATTERN.test(name) || derived.has(name)) continue;
    const candidates = candidateNames(name);
    let chosen = candidates.find((c) => !taken.has(c));
    if (chosen === undefined) {
      const base = (candidates[0] ?? FALLBACK).slice(0, MAX - 4);
      for (let n = 2; chosen === undefined; n++) if (!taken.has(`${base}-${n}`)) chosen = `${base}-${n}`;
    }
    taken.add(chosen);
    derived.set(name, chosen);
  }
  return derived;
}

/** The warning that names a derived name, in the start-up log and in `switchboard validate`. */
export function renamedWarning(name: string, served: string): string {
  return `server "${name}" is served as "${served}" (names are letters, digits, - and _; it becomes /servers/${served}/mcp)`;
}
