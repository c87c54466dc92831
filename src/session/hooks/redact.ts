/**
 * The built-in guard (`mcpServers.<name>.redact`): secrets in tool results are replaced with a
 * marker before the result leaves the gateway, so a tool that reads a key file or an environment
 * does not hand the key to the model (and to whatever the model writes it into). It rewrites text
 * content blocks, the text of embedded resources, and every string in `structuredContent`.
 * Pattern matching, not understanding: it catches the well-known shapes below and the operator's
 * own patterns, not a secret in an unknown format.
 */
import { isObject } from '../../jsonrpc/envelope.ts';
import type { JsonObject } from '../../jsonrpc/types.ts';
import type { RedactConfig } from '../../config/types.ts';

/** The well-known shapes; each part names what it catches. */
const BUILT_IN = [
  // PEM private keys of any kind (RSA, EC, OPENSSH, ENCRYPTED, PKCS#8), cut short ones too.
  String.raw`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)`,
  // AWS access key ids (long-term AKIA, temporary ASIA).
  String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
  // GCP API keys and OAuth access tokens.
  String.raw`\bAIza[0-9A-Za-z_-]{35}\b`,
  String.raw`\bya29\.[0-9A-Za-z_-]{20,}`,
  // Slack bot, user, app and refresh tokens.
  String.raw`\bxox[abposre]-[0-9A-Za-z-]{10,}`,
  String.raw`\bxapp-[0-9A-Za-z-]{10,}`,
  // GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens; fine-grained PATs.
  String.raw`\bgh[pousr]_[A-Za-z0-9]{36,}\b`,
  String.raw`\bgithub_pat_[A-Za-z0-9_]{22,}`,
  // Bearer credentials as an Authorization header or a log line carries them.
  String.raw`\b[Bb]earer\s+[A-Za-z0-9._~+/-]{8,}=*`,
];

/** Replaces what it finds in a result, in place; returns how many matches it replaced. */
export type Redactor = (result: JsonObject) => number;

export function createRedactor(config: RedactConfig): Redactor | undefined {
  const sources = [...(config.secrets ? [BUILT_IN.map((p) => `(?:${p})`).join('|')] : []), ...config.patterns];
  if (sources.length === 0) return undefined;
  const patterns = sources.map((source) => new RegExp(source, 'g'));
  const { marker } = config;

  const scrub = (text: string, counter: { n: number }): string => {
    let out = text;
    for (const pattern of patterns) {
      out = out.replace(pattern, (match) => {
        // An empty match (a pattern like "x*") replaces nothing.
        if (match === '') return match;
        counter.n++;
        return marker;
      });
    }
    return out;
  };

  const walk = (value: unknown, counter: { n: number }): unknown => {
    if (typeof value === 'string') return scrub(value, counter);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = walk(value[i], counter);
    } else if (isObject(value)) {
      for (const key of Object.keys(value)) value[key] = walk(value[key], counter);
    }
    return value;
  };

  return (result) => {
    const counter = { n: 0 };
    if (Array.isArray(result.content)) {
      for (const block of result.content) {
        if (!isObject(block)) continue;
        if (block.type === 'text' && typeof block.text === 'string') block.text = scrub(block.text, counter);
        if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.text === 'string') block.resource.text = scrub(block.resource.text, counter);
      }
    }
    if (result.structuredContent !== undefined) result.structuredContent = walk(result.structuredContent, counter);
    return counter.n;
  };
}
