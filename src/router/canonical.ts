/**
 * The one spelling of a resource URI that every rule is matched against (policy, step-up, a
 * target's filters, virtual picks, subscriptions and listen grants) and that is forwarded upstream:
 * what is judged is what the server receives (docs/security.md, "One spelling of a URI").
 *
 * RFC 3986 section 6.2.2 (syntax-based normalisation), plus what file servers read alike:
 * - the scheme and host lower-cased, a host's trailing dot dropped, `file://localhost/x` as `file:///x`;
 * - percent-escapes of unreserved characters decoded (`%70` is `p`, `%2e` is `.`), the others in
 *   upper-case hex; other characters outside ASCII NFC-normalised and escaped as UTF-8;
 * - `//` in the path collapsed, `.` and `..` segments resolved (never above the root).
 * Refused (undefined) because no spelling of them is safe to judge: no scheme, a malformed escape,
 * an escaped `/`, `\` or NUL (`%2F`, `%5C`, `%00`, which a server may decode into a path separator
 * after the rule was matched), a raw `\` or control characters. A raw space is escaped (`%20`).
 */

import { domainToASCII } from 'node:url';

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Escapes that a server could turn into a path separator or a terminator after the match. */
const FORBIDDEN_ESCAPES = new Set(['%2F', '%5C', '%00']);
const REFUSED_RAW = /[\u0000-\u001f\u007f\\]/;

/** `text` with its escapes normalised and non-ASCII escaped; undefined for a malformed or forbidden escape. */
function normaliseEscapes(text: string): string | undefined {
  // Plain ASCII without escapes or spaces is already canonical here: most URIs are.
  if (!/[% \u0080-\uffff]/.test(text)) return text;
  let out = '';
  const nfc = text.normalize('NFC');
  for (let i = 0; i < nfc.length; i++) {
    const c = nfc[i] as string;
    if (c === '%') {
      const hex = nfc.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      const upper = `%${hex.toUpperCase()}`;
      if (FORBIDDEN_ESCAPES.has(upper)) return undefined;
      const decoded = String.fromCharCode(parseInt(hex, 16));
      out += UNRESERVED.test(decoded) ? decoded : upper;
      i += 2;
    } else if (c === ' ') {
      out += '%20';
    } else if (c.charCodeAt(0) > 0x7f) {
      const code = nfc.codePointAt(i) as number;
      const char = String.fromCodePoint(code);
      for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      i += char.length - 1;
    } else {
      out += c;
    }
  }
  return out;
}

/** RFC 3986 5.2.4 on a path already split at `/`, empty segments (`//`) dropped; never climbs above the root. */
function resolvePath(path: string): string {
  if (path === '') return '';
  const absolute = path.startsWith('/');
  const out: string[] = [];
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i] as string;
    if (s === '..') out.pop();
    else if (s !== '.' && s !== '') out.push(s);
  }
  const last = segments[segments.length - 1];
  const trailing = segments.length > 1 && (last === '' || last === '.' || last === '..');
  const body = out.join('/');
  return `${absolute ? '/' : ''}${body}${trailing && body !== '' ? '/' : ''}`;
}

/** A host in the spelling URL parsers resolve it to; undefined when it has none (a malformed escape, IDNA refused). */
function decodeHost(host: string, scheme: string): string | undefined {
  if (host === '' || host.startsWith('[')) return host.toLowerCase();
  // Other schemes' hosts are opaque to URL parsers: escapes normalised, case folded, nothing more.
  if (scheme !== 'file' && !SPECIAL.has(scheme)) return normaliseEscapes(host)?.toLowerCase();
  let text: string;
  try {
    text = decodeURIComponent(host);
  } catch {
    return undefined;
  }
  const ascii = domainToASCII(text);
  return ascii === '' ? undefined : ascii;
}

/** Schemes WHATWG URL parsers treat as special: `http:x`, `http:/x` and `http://x` are one URL, and `file:/x`, `file:x` are `file:///x`. */
const SPECIAL = new Set(['http', 'https', 'ws', 'wss', 'ftp']);

/** The authority with its host lower-cased and its trailing dot dropped (userinfo and port kept). */
function normaliseAuthority(authority: string, scheme: string): string | undefined {
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  let hostPort = authority.slice(at + 1);
  const portMatch = /:(\d*)$/.exec(hostPort);
  const port = portMatch === null || hostPort.startsWith('[') && !hostPort.includes(']:') ? '' : portMatch[0];
  let host = hostPort.slice(0, hostPort.length - port.length);
  // Hosts as WHATWG URL parsers read them (IDNA: `ｌocalhost` is `localhost`, case folded); an
  // IP literal is kept as written, lower-cased.
  const decoded = decodeHost(host, scheme);
  if (decoded === undefined) return undefined;
  host = decoded;
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (scheme === 'file' && host === 'localhost') host = '';
  hostPort = `${host}${port === ':' ? '' : port}`;
  const user = normaliseEscapes(userinfo);
  return user === undefined ? undefined : `${user}${hostPort}`;
}

/** The canonical spelling of `uri` (see the file comment); undefined when it cannot be judged. */
export function canonicalUri(uri: string): string | undefined {
  const schemeMatch = SCHEME.exec(uri);
  if (schemeMatch === null || REFUSED_RAW.test(uri)) return undefined;
  const scheme = (schemeMatch[1] as string).toLowerCase();
  let rest = uri.slice(schemeMatch[0].length);
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) [rest, fragment] = [rest.slice(0, hash), rest.slice(hash)];
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) [rest, query] = [rest.slice(0, q), rest.slice(q)];
  let authority: string | undefined;
  // The forms URL parsers (and so file servers) read as having an authority, however few slashes.
  if (scheme === 'file' && !rest.startsWith('//')) rest = `///${rest.replace(/^\/+/, '')}`;
  else if (SPECIAL.has(scheme)) rest = `//${rest.replace(/^\/+/, '')}`;
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    authority = normaliseAuthority(end < 0 ? rest.slice(2) : rest.slice(2, end), scheme);
    if (authority === undefined) return undefined;
    rest = end < 0 ? '' : rest.slice(end);
  }
  const path = normaliseEscapes(rest);
  const nq = normaliseEscapes(query);
  const nf = normaliseEscapes(fragment);
  if (path === undefined || nq === undefined || nf === undefined) return undefined;
  // An opaque path (`urn:a:b`, `data:...`) has no segments to resolve.
  const resolved = authority !== undefined || path.startsWith('/') ? resolvePath(path) : path;
  return `${scheme}:${authority === undefined ? '' : `//${authority}`}${resolved}${nq}${nf}`;
}

/**
 * A rule's URI glob in the canonical spelling, so `FILE://localhost/x/*` written by an operator
 * matches what canonicalUri makes of a request; a glob that is no URI is kept as written.
 */
export function canonicalGlob(glob: string): string {
  return canonicalUri(glob) ?? glob;
}

/**
 * The spelling tool and prompt names are matched in by the rules that fail closed (step-up, a
 * policy deny): NFKC, trimmed; the rules' expressions ignore case. `Delete_File` or a full-width
 * `ｄelete_file` meets what `delete_*` says, whatever the upstream makes of such a name.
 */
export function foldName(name: string): string {
  return name.normalize('NFKC').trim();
}
