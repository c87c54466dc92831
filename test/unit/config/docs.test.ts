/**
 * docs/configuration.md documents every config key with its default, and nothing else: checked
 * both ways against the schema so the reference cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { authSchema, rateLimitsSchema, ruleSchema } from '../../../src/config/auth-schema.ts';
import { auditSchema } from '../../../src/config/audit-schema.ts';
import { clusterSchema } from '../../../src/config/cluster-schema.ts';
import { hookSchema } from '../../../src/config/hooks-schema.ts';
import { virtualServerSchema } from '../../../src/config/overrides-schema.ts';
import { gatewaySchema, httpServerSchema, sseServerSchema, stdioServerSchema } from '../../../src/config/schema.ts';

const oauthDefaults = flatten((gatewaySchema.parse({ oauth: { key: 'k'.repeat(32) } }) as { oauth: Record<string, unknown> }).oauth);
for (const key of ['key', 'publicUrl']) oauthDefaults.set(key, undefined);

const docs = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

/** Rows of the key tables between two headings: key -> default cell. */
function documentedRows(fromHeading: string, toHeading: string): Map<string, string> {
  const start = docs.indexOf(fromHeading);
  const end = docs.indexOf(toHeading);
  expect(start, fromHeading).toBeGreaterThan(-1);
  expect(end, toHeading).toBeGreaterThan(start);
  const rows = new Map<string, string>();
  for (const line of docs.slice(start, end).split('\n')) {
    const match = /^\| `([A-Za-z.]+)` \| [^|]+ \|\s*([^|]*?)\s*\|/.exec(line);
    if (match?.[1] !== undefined) rows.set(match[1], (match[2] ?? '').trim());
  }
  return rows;
}

/** Flattens `{ limits: { a: 1 } }` to `limits.a -> 1`. */
function flatten(value: Record<string, unknown>, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'object' && item !== null && !Array.isArray(item) && Object.keys(item).length > 0) {
      for (const [inner, v] of flatten(item as Record<string, unknown>, `${prefix}${key}.`)) out.set(inner, v);
    } else {
      out.set(`${prefix}${key}`, item);
    }
  }
  return out;
}

// Keys without a default (required, or optional and unset) still need a row; undefined = no default to check.
const serverDefaults = flatten(stdioServerSchema.parse({ type: 'stdio', command: 'x' }));
for (const key of ['command', 'cwd', 'pinning']) serverDefaults.set(key, undefined);
// sandbox and limits are unset by default: parsed empty so their keys' defaults are checked too.
for (const [key, value] of flatten(stdioServerSchema.parse({ type: 'stdio', command: 'x', sandbox: {} }))) {
  if (key.startsWith('sandbox.')) serverDefaults.set(key, value);
}
// redact is unset by default: parsed empty so its keys' defaults are checked too.
for (const [key, value] of flatten(stdioServerSchema.parse({ type: 'stdio', command: 'x', redact: {} }))) {
  if (key.startsWith('redact.')) serverDefaults.set(key, value);
}
serverDefaults.set('redact', undefined);
for (const key of ['sandbox', 'sandbox.readable', 'limits', 'limits.memoryMiB', 'limits.processes', 'limits.cpuSeconds', 'limits.openFiles']) serverDefaults.set(key, undefined);
// Both remote kinds have the same keys; the docs give them one table.
// tokenExchange is optional: parsed with its required keys so its defaults are checked too.
const tokenExchange = { tokenEndpoint: 'http://as/token', clientId: 'c', clientSecret: 's' };
const remoteDefaults = flatten(httpServerSchema.parse({ type: 'http', url: 'http://x/mcp', tokenExchange, redact: {} }));
for (const key of ['oauth.perUser', 'oauth.scopes', 'oauth.clientId', 'oauth.clientSecret']) remoteDefaults.set(key, undefined);
remoteDefaults.set('redact', undefined);
for (const key of ['url', 'pinning', 'tokenExchange.tokenEndpoint', 'tokenExchange.clientId', 'tokenExchange.clientSecret', 'tokenExchange.audience', 'tokenExchange.resource', 'tokenExchange.scope']) {
  remoteDefaults.set(key, undefined);
}
// Keys that only matter on aggregate endpoints (every kind has them) have a table of their own.
const aggregateDefaults = new Map<string, unknown>([['prefix', undefined], ['eager', undefined], ['requiredScopes.tools', undefined], ['requiredScopes.prompts', undefined], ['requiredScopes.resources', undefined]]);
for (const key of ['tools', 'prompts', 'serverInfo.name', 'instructions']) aggregateDefaults.set(`overrides.${key}`, undefined);
for (const [key, value] of serverDefaults) {
  if (/^(tools|prompts|resources)\./.test(key)) aggregateDefaults.set(key, value);
}
for (const key of aggregateDefaults.keys()) {
  serverDefaults.delete(key);
  remoteDefaults.delete(key);
}
const gatewayDefaults = flatten(gatewaySchema.parse({}));
for (const key of ['allowedOrigins', 'allowedHosts', 'auth', 'policy', 'rateLimits', 'audit']) gatewayDefaults.set(key, undefined);
// aggregate.discovery is unset by default: parsed empty so its keys' defaults are checked too.
for (const [key, value] of flatten(gatewaySchema.parse({ aggregate: { discovery: {} } }))) if (key.startsWith('aggregate.discovery.')) gatewayDefaults.set(key, value);
// The console is optional: parsed on, so its defaults are checked too; its keys without a default need a row.
for (const [key, value] of flatten(gatewaySchema.parse({ admin: { console: {} } }))) if (key.startsWith('admin.console.')) gatewayDefaults.set(key, value);
for (const key of ['clientId', 'clientSecret', 'issuer', 'operatorClaim']) gatewayDefaults.set(`admin.console.${key}`, undefined);
// Telemetry keys have no defaults of their own: unset, the OTEL_* variables decide.
for (const key of ['enabled', 'endpoint', 'serviceName', 'sampleRatio']) gatewayDefaults.set(`telemetry.traces.${key}`, undefined);
const authDefaults = flatten(authSchema.parse({ anonymous: false, jwt: { issuers: ['https://as.example'], jwksUrl: 'https://as.example/jwks' } }));
for (const key of ['anonymous', 'publicUrl', 'authorizationServers', 'jwt.jwksUrl', 'jwt.keys', 'jwt.issuers']) authDefaults.set(key, undefined);
const ruleDefaults = flatten(ruleSchema.parse({}));
for (const key of ['tools', 'prompts', 'resources']) ruleDefaults.set(key, undefined);
const rateDefaults = flatten(rateLimitsSchema.parse({}));
for (const key of ['perPrincipal.perSecond', 'perPrincipal.burst', 'perTool.perSecond', 'perTool.burst']) rateDefaults.set(key, undefined);

const clusterDefaults = flatten(clusterSchema.parse({ advertiseUrl: 'http://10.0.0.5:8080', redis: { url: 'redis://redis:6379' }, keys: ['k'.repeat(32)] }));
for (const key of ['replicaId', 'advertiseUrl', 'redis.url', 'redis.username', 'redis.password', 'redis.caFile', 'keys']) clusterDefaults.set(key, undefined);

const virtualDefaults = flatten(virtualServerSchema.parse({}));
const auditDefaults = flatten(auditSchema.parse({}));
auditDefaults.set('sinks', [{ type: 'log' }]);

const sections = [
  { name: 'servers', defaults: serverDefaults, rows: () => documentedRows('## `mcpServers.<name>`', '### Remote servers') },
  { name: 'remote servers', defaults: remoteDefaults, rows: () => documentedRows('### Remote servers', '### Keys for aggregate endpoints') },
  { name: 'aggregate', defaults: aggregateDefaults, rows: () => documentedRows('### Keys for aggregate endpoints', '## `gateway`') },
  { name: 'gateway', defaults: gatewayDefaults, rows: () => documentedRows('## `gateway`:', '## `gateway.auth`') },
  { name: 'gateway.auth', defaults: authDefaults, rows: () => documentedRows('## `gateway.auth`', '## `gateway.policy`') },
  { name: 'gateway.policy rules', defaults: ruleDefaults, rows: () => documentedRows('## `gateway.policy`', '## `gateway.rateLimits`') },
  { name: 'gateway.rateLimits', defaults: rateDefaults, rows: () => documentedRows('## `gateway.rateLimits`', '## `gateway.cluster`') },
  { name: 'gateway.cluster', defaults: clusterDefaults, rows: () => documentedRows('## `gateway.cluster`', '## `gateway.oauth`') },
  { name: 'gateway.oauth', defaults: oauthDefaults, rows: () => documentedRows('## `gateway.oauth`', '## `gateway.virtualServers`') },
  { name: 'gateway.virtualServers', defaults: virtualDefaults, rows: () => documentedRows('## `gateway.virtualServers`', '## `gateway.audit`') },
  { name: 'gateway.audit', defaults: auditDefaults, rows: () => documentedRows('## `gateway.audit`', '## Environment variables') },
];

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.each(sections)('docs/configuration.md, $name keys', ({ defaults, rows }) => {
  it('documents every key with its default', () => {
    const documented = rows();
    for (const [key, value] of defaults) {
      const cell = documented.get(key);
      expect(cell, `docs row for ${key}`).toBeDefined();
      if (value !== undefined) expect(cell, `default of ${key}`).toMatch(new RegExp(`^\`${escape(JSON.stringify(value))}\``));
    }
  });

  it('documents no key the schema does not have', () => {
    expect([...rows().keys()].filter((key) => !defaults.has(key))).toEqual([]);
  });
});

describe('docs/configuration.md, remote servers', () => {
  it('documents http and sse in one table because their keys are the same (but `protocol`, http only)', () => {
    // `pinning` is optional with no default: it has a row, and no parsed value to compare.
    const oauth = [...flatten(sseServerSchema.parse({ type: 'sse', url: 'http://x/sse', oauth: { perUser: true, scopes: ['a'], clientId: 'c', clientSecret: 's' } })).keys()].filter((key) => key.startsWith('oauth.'));
    const sse = [...flatten(sseServerSchema.parse({ type: 'sse', url: 'http://x/sse', tokenExchange, redact: {} })).keys(), 'redact', ...oauth].filter((key) => !aggregateDefaults.has(key));
    expect(sse.sort()).toEqual([...remoteDefaults.keys()].filter((key) => key !== 'protocol' && key !== 'pinning' && (sse.includes(key) || !key.startsWith('tokenExchange.'))).sort());
    expect(docs).toMatch(/\| `protocol` \| [^|]*`http` only/);
  });
});

describe('docs/configuration.md, hooks', () => {
  it('documents every key of a hook with its default, and nothing else', () => {
    const rows = new Map([...docs.matchAll(/^\| `hooks\[\]\.([A-Za-z]+)` \| [^|]+ \|\s*([^|]*?)\s*\|/gm)].map((m) => [m[1]!, m[2]!]));
    const defaults = hookSchema.parse({ url: 'http://hook/x' });
    expect([...rows.keys()].sort()).toEqual(Object.keys(hookSchema.shape).sort());
    for (const [key, value] of Object.entries(defaults)) if (key !== 'url') expect(rows.get(key), key).toMatch(new RegExp(`^\`${escape(JSON.stringify(value))}\``));
  });
});

describe('docs/configuration.md, audit sinks', () => {
  it('documents every key of every sink kind with its default, and nothing else', () => {
    const rows = new Map([...docs.matchAll(/^\| `sinks\[\]\.([A-Za-z]+)` \| [^|]+ \|\s*([^|]*?)\s*\|/gm)].map((m) => [m[1]!, m[2]!]));
    const kinds = [auditSchema.shape.sinks.unwrap().element.options].flat();
    const keys = new Set(kinds.flatMap((kind) => Object.keys(kind.shape)));
    expect([...rows.keys()].sort()).toEqual([...keys].sort());
    const http = auditSchema.parse({ sinks: [{ type: 'http', url: 'http://receiver/x' }] }).sinks[0] as Record<string, unknown>;
    for (const [key, value] of Object.entries(http)) if (key !== 'url' && key !== 'type') expect(rows.get(key), key).toMatch(new RegExp(`^\`${escape(JSON.stringify(value))}\``));
  });
});

describe('docs/configuration.md, command line', () => {
  it('documents every command-line option', () => {
    for (const flag of ['--config', '--host', '--port', '--log-level', '--help', '--version']) expect(docs).toContain(`\`${flag}`);
  });
});
