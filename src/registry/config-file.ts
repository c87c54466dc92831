/**
 * Adds a registry entry to a config file (YAML or JSON), keeping everything already in it (YAML
 * comments included), after validating the entry like any config. A YAML file gets comments naming
 * each variable to set; JSON cannot hold comments, so the command prints them instead. Written
 * through a temporary file and a rename, so a failure never leaves half a config.
 */
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Document, isMap, isScalar, parseDocument } from 'yaml';
import { parseConfig } from '../config/load.ts';
import { isPlainObject } from '../config/interpolate.ts';
import type { RequiredVariable } from './inputs.ts';
import { RegistryEntryError, type RegistryEntry } from './to-entry.ts';

/** What the written entry is about: shown in the comment above it. */
export interface EntryOrigin {
  readonly registryName: string;
  readonly version: string | undefined;
  readonly description: string | undefined;
}

/**
 * Validates the entry on its own (its variables stand in with placeholders: nobody's secrets are
 * needed to check the shape), then writes it into `path`, creating the file when it does not exist.
 * Throws RegistryEntryError for a name already taken, a file that is not YAML or JSON, or an entry
 * the config schema refuses.
 */
export async function addEntryToFile(path: string, added: RegistryEntry, origin: EntryOrigin): Promise<{ created: boolean }> {
  validateEntry(added, path);
  const existing = await readIfExists(path);
  const format = formatOf(path);
  const text = format === 'json' ? addToJson(existing ?? '{}', added, path) : addToYaml(existing ?? '', added, origin, path);
  const mode = existing === undefined ? 0o600 : (await stat(path)).mode & 0o777;
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await rename(temporary, path);
  return { created: existing === undefined };
}

/** The entry alone through the real config schema, with a placeholder for each variable it references. */
export function validateEntry(added: RegistryEntry, path: string): void {
  const env: Record<string, string> = {};
  for (const variable of added.variables) env[variable.name] = 'placeholder';
  try {
    parseConfig({ mcpServers: { [added.name]: added.entry } }, { env, source: path });
  } catch (error) {
    throw new RegistryEntryError(`the entry for "${added.name}" does not validate: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function formatOf(path: string): 'json' | 'yaml' {
  const extension = extname(path).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.yaml' || extension === '.yml') return 'yaml';
  throw new RegistryEntryError(`${path}: expected a .yaml, .yml or .json config file`);
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Refuses an entry whose variables the file already references elsewhere: two servers reading one
 * `${VAR}` would both receive its value, one server's key given to the other (the names are
 * prefixed with the entry's, inputs.ts; this catches what still meets, e.g. `a-b` + `C` and `a` + `B_C`).
 */
function refuseShared(document: unknown, added: RegistryEntry, path: string): void {
  const text = JSON.stringify(document) ?? '';
  for (const variable of added.variables) {
    const used = new RegExp(String.raw`(?<!\$)\$\{${variable.name}(?::-[^}]*)?\}`).test(text);
    if (used) {
      throw new RegistryEntryError(`${path} already references \${${variable.name}}, which the entry for "${added.name}" would read too (one server would receive the other's value); choose another name with --as <name>`);
    }
  }
}

function taken(name: string, path: string): RegistryEntryError {
  return new RegistryEntryError(`${path} already has a server named "${name}"; choose another with --as <name>`);
}

function addToJson(text: string, added: RegistryEntry, path: string): string {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new RegistryEntryError(`${path} is not valid JSON; fix it first (switchboard validate ${path})`);
  }
  if (!isPlainObject(document)) throw new RegistryEntryError(`${path} does not hold a JSON object`);
  const servers = document.mcpServers ?? {};
  if (!isPlainObject(servers)) throw new RegistryEntryError(`${path}: "mcpServers" is not an object`);
  if (Object.hasOwn(servers, added.name)) throw taken(added.name, path);
  refuseShared(document, added, path);
  return `${JSON.stringify({ ...document, mcpServers: { ...servers, [added.name]: added.entry } }, null, 2)}\n`;
}

function addToYaml(text: string, added: RegistryEntry, origin: EntryOrigin, path: string): string {
  const parsed = parseDocument(text);
  if (parsed.errors.length > 0) throw new RegistryEntryError(`${path} is not valid YAML; fix it first (switchboard validate ${path})`);
  // A new or empty file: a fresh document, so the servers are written in block style.
  const doc: Document = parsed.contents === null ? new Document({}) : parsed;
  if (parsed.commentBefore !== null && doc !== parsed) doc.commentBefore = parsed.commentBefore;
  if (!isMap(doc.contents)) throw new RegistryEntryError(`${path} does not hold a YAML mapping`);
  if (doc.hasIn(['mcpServers', added.name])) throw taken(added.name, path);
  if (doc.has('mcpServers') && !isMap(doc.get('mcpServers', true))) throw new RegistryEntryError(`${path}: "mcpServers" is not a mapping`);
  refuseShared(doc.toJS(), added, path);
  const node = doc.createNode(added.entry);
  node.commentBefore = headerComment(added, origin);
  describeKeys(node, 'env', added.variables);
  describeKeys(node, 'headers', added.variables);
  doc.setIn(['mcpServers', added.name], node);
  return String(doc);
}

function headerComment(added: RegistryEntry, origin: EntryOrigin): string {
  const lines = [` ${origin.registryName}${origin.version === undefined ? '' : ` ${origin.version}`} from the MCP registry: ${added.source}`];
  if (origin.description !== undefined) lines.push(` ${oneLine(origin.description)}`);
  const toSet = added.variables.filter((v) => v.required).map((v) => `${v.name}${v.secret ? ' (secret)' : ''}`);
  if (toSet.length > 0) lines.push(` set before starting the gateway: ${toSet.join(', ')}`);
  return lines.join('\n');
}

/** A comment over each env or header key that references a variable: what the registry says it is. */
function describeKeys(node: unknown, key: string, variables: readonly RequiredVariable[]): void {
  if (!isMap(node)) return;
  const map = node.get(key, true);
  if (!isMap(map)) return;
  for (const pair of map.items) {
    if (!isScalar(pair.value) || typeof pair.value.value !== 'string' || !isScalar(pair.key)) continue;
    const value = pair.value.value;
    const used = variables.filter((v) => value.includes(`\${${v.name}`));
    const notes = used.map((v) => `${v.name}${v.secret ? ' (secret)' : ''}${v.description === undefined ? '' : `: ${oneLine(v.description)}`}`);
    if (notes.length > 0) pair.key.commentBefore = notes.map((n) => ` ${n}`).join('\n');
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 200);
}
