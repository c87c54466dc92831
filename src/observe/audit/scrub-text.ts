/**
 * Secrets in the free text of an audit record. A record's `uri`, `tool`, `prompt`, `requestId`
 * and the like are what the client sent, and a client may put a credential there: a resource URI
 * with `?access_token=...` or `https://user:pass@host/...`, a key pasted into a name. The record
 * goes to every sink (the log stream without the operational log's redaction, OTLP, HTTP
 * receivers) and to the console, so these fields pass the same built-in secret shapes as captured
 * values (session/hooks/redact.ts, plus the operator's `capture.patterns`), and a URI's userinfo
 * password and the values of query parameters named like credentials are replaced too (RFC 6750
 * section 2.3 puts a bearer token in `access_token`; signed URLs carry `sig`, `signature`,
 * `X-Amz-Signature`, `X-Amz-Credential`). The marker is the redaction's, `[REDACTED]`.
 */
import { createRedactor } from '../../session/hooks/redact.ts';

const MARKER = '[REDACTED]';
/** Query parameter names whose values are credentials (case-insensitive, in any position of the name). */
const SECRET_PARAM = /token|secret|passw|pwd|api[-_]?key|^key$|[-_]key$|auth|credential|signature|^sig$|session|^code$/i;

/** A URI with userinfo's password and credential-named query values replaced; other text unchanged. */
export function scrubUri(uri: string): string {
  // userinfo: scheme://user:password@host (RFC 3986 section 3.2.1 deprecates it; clients still send it).
  let out = uri.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i, `$1:${MARKER}@`);
  const q = out.indexOf('?');
  if (q < 0) return out;
  const hash = out.indexOf('#', q);
  const end = hash < 0 ? out.length : hash;
  const query = out
    .slice(q + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // A malformed escape: judge the name as written.
      }
      return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=${MARKER}` : pair;
    })
    .join('&');
  out = `${out.slice(0, q + 1)}${query}${out.slice(end)}`;
  return out;
}

/** Scrubs the named string fields of `record` in place: the secret shapes everywhere, and `scrubUri` on `uri`. */
export function createTextScrubber(patterns: readonly string[], fields: readonly string[]): (record: Record<string, unknown>) => void {
  const redact = createRedactor({ secrets: true, patterns: [...patterns], marker: MARKER });
  return (record) => {
    const texts: Record<string, unknown> = {};
    for (const key of fields) if (typeof record[key] === 'string') texts[key] = record[key];
    if (typeof texts.uri === 'string') texts.uri = scrubUri(texts.uri);
    const holder = { structuredContent: texts };
    redact?.(holder);
    Object.assign(record, holder.structuredContent);
  };
}
