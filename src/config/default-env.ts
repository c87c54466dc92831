/**
 * The environment variables a child inherits from the gateway unless its target says otherwise:
 * what a process needs to find programs, its home and its locale, nothing that usually holds a
 * secret. The MCP TypeScript SDK passes the same first six to stdio servers.
 */
export const DEFAULT_INHERITED_ENV: readonly string[] = Object.freeze([
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
]);
