/**
 * The MCP config files people already have: Claude Desktop's (other settings beside
 * `mcpServers`), Cline's (`autoApprove`, `timeout` in seconds, `type: streamableHttp`), VS Code's
 * (`servers` root, `inputs`, `${input:...}` and `${env:...}`), Cursor's and Windsurf's (`url`,
 * `serverUrl`). Such a file is read for what maps onto Switchboard's own format; every key that
 * does not map is named once in a warning, and `disabled` is honoured.
 *
 * Switchboard's own format stays strict: a file is read as foreign only on evidence of another
 * client (no `gateway` key, and a root key besides `mcpServers`, an entry key or type value only
 * those clients write, or a server named after a repository path as Cline's marketplace names
 * them); anything else is validated as it is, so a typo is an error, not a warning. A server name
 * that cannot be a URL path segment is served under a valid one derived from it (server-names.ts).
 */
import { httpServerSchema, stdioServerSchema } from './schema.ts';
import { isPlainObject } from './interpolate.ts';
import { deriveServerNames, renamedWarning } from './server-names.ts';

export interface ForeignTranslation {
  /** The document in Switchboard's own format. */
  readonly document: { mcpServers: Record<string, Record<string, unknown>> };
  /** One line per ignored key, per renamed server, per input that cannot be asked for. */
  readonly warnings: string[];
}

const OWN_KEYS = new Set([...Object.keys(stdioServerSchema.shape), ...Object.keys(httpServerSchema.shape)]);
/**
 * Entry keys only other clients write: evidence that a file is theirs. Not Cline's `timeout`: in a
 * Switchboard file it is the likeliest typo of `timeoutMs` and must stay an error there (a Cline
 * file carries `autoApprove` anyway, and then `timeout` is read, in seconds).
 */
const FOREIGN_ENTRY_KEYS = new Set([
  'autoApprove', 'alwaysAllow', 'serverUrl', 'disabledTools', 'envFile', 'transportType', 'networkTimeout', 'trust',
]);
/** Keys other clients write that Switchboard reads with the same meaning. */
const MAPPED = new Set(['command', 'args', 'env', 'cwd', 'url', 'serverUrl', 'headers', 'disabled', 'type', 'timeout']);
/** `type` values of other clients, to Switchboard's. */
const TYPES: Readonly<Record<string, string>> = {
  stdio: 'stdio',
  http: 'http',
  streamableHttp: 'http',
  'streamable-http': 'http',
  streamable_http: 'http',
  sse: 'sse',
};

/** A foreign file translated, or undefined for Switchboard's own format (validated strictly). */
export function translateForeign(document: unknown): ForeignTranslation | undefined {
  if (!isPlainObject(document) || 'gateway' in document) return undefined;
  const servers = document['mcpServers'] ?? document['servers'];
  if (!isPlainObject(servers)) return undefined;
  const entries = Object.entries(servers).filter((entry): entry is [string, Record<string, unknown>] => isPlainObject(entry[1]));
  const foreignRoot = Object.keys(document).some((key) => key !== 'mcpServers');
  const foreignEntry = entries.some(([, server]) =>
    Object.entries(server).some(([key, value]) => FOREIGN_ENTRY_KEYS.has(key) || (key === 'type' && isForeignType(value))),
  );
  // Cline's marketplace: `github.com/<owner>/<repo>/tree/main/src/<server>`; never a Switchboard name.
  const repositoryName = entries.some(([name]) => name.includes('/'));
  if (!foreignRoot && !foreignEntry && !repositoryName) return undefined;

  const ignored = new Map<string, string[]>();
  const note = (key: string, where: string) => ignored.set(key, [...(ignored.get(key) ?? []), where]);
  for (const key of Object.keys(document)) if (key !== 'mcpServers' && key !== 'servers') note(key, 'the file');
  const warnings: string[] = [];
  const mcpServers: Record<string, Record<string, unknown>> = {};
  const derived = deriveServerNames(entries.map(([name]) => name));
  for (const [name, server] of entries) {
    const target = derived.get(name) ?? name;
    if (target !== name) warnings.push(renamedWarning(name, target));
    mcpServers[target] = translateServer(server, name, note, warnings);
  }
  for (const [key, where] of ignored) warnings.push(`ignored key "${key}" (in ${where.join(', ')}): Switchboard has no use for it`);
  return { document: { mcpServers }, warnings };
}

function isForeignType(value: unknown): boolean {
  return value === 'streamableHttp' || value === 'streamable_http';
}

function translateServer(
  server: Record<string, unknown>,
  name: string,
  note: (key: string, where: string) => void,
  warnings: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(server)) {
    if (OWN_KEYS.has(key) && !MAPPED.has(key)) out[key] = value; // Switchboard's own keys, kept
    else if (!MAPPED.has(key)) note(key, `"${name}"`);
  }
  const url = server['url'] ?? server['serverUrl'];
  if (server['command'] !== undefined) {
    for (const key of ['command', 'args', 'cwd'] as const) if (server[key] !== undefined) out[key] = server[key];
    if (isPlainObject(server['env'])) out['env'] = mapValues(server['env'], name, 'env', warnings);
  } else if (url !== undefined) {
    out['url'] = url;
    if (isPlainObject(server['headers'])) out['headers'] = mapValues(server['headers'], name, 'headers', warnings);
  }
  const type = typeof server['type'] === 'string' ? TYPES[server['type']] : undefined;
  if (type !== undefined) out['type'] = type;
  else if (server['type'] !== undefined) warnings.push(`server "${name}": unknown type ${JSON.stringify(server['type'])}; inferred from command or url`);
  if (out['type'] === undefined && server['command'] === undefined && url !== undefined) out['type'] = 'http';
  if (server['disabled'] !== undefined) out['disabled'] = server['disabled'];
  // Cline: seconds.
  if (typeof server['timeout'] === 'number' && server['timeout'] > 0) out['timeoutMs'] = Math.round(server['timeout'] * 1000);
  return out;
}

/**
 * VS Code's `${env:NAME}` becomes `${NAME}` (interpolated as usual); a value that asks for an
 * `${input:...}` cannot be asked for here: it is left out, with a warning saying how to supply it.
 */
function mapValues(values: Record<string, unknown>, name: string, what: string, warnings: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (typeof value !== 'string') {
      out[key] = value;
      continue;
    }
    if (/\$\{input:[^}]*\}/.test(value)) {
      warnings.push(`server "${name}": ${what}.${key} asks for a VS Code input, which Switchboard cannot prompt for; left out (write \${${key.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}} and set that variable)`);
      continue;
    }
    out[key] = value.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '$${$1}');
  }
  return out;
}
