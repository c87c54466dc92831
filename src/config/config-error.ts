/**
 * ConfigError: anything wrong with what the operator wrote (config file, environment variables
 * referenced by it, command-line flags). The CLI prints its message and exits with code 2; it never
 * reaches a downstream, so it is not part of the GW_* catalog.
 */

/** One problem, located by the key path it was found at (`mcpServers.everything.timeoutMs`). */
export interface ConfigIssue {
  /** Rendered key path, or a flag name such as `--port`; empty for the document itself. */
  readonly path: string;
  readonly message: string;
}

export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  /**
   * @param issues what is wrong, each with its path
   * @param source where it came from (a file path), prefixed to the message when given
   */
  constructor(issues: readonly ConfigIssue[], source?: string, options?: { cause?: unknown }) {
    super(formatIssues(issues, source), options);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export function isConfigError(value: unknown): value is ConfigError {
  return value instanceof ConfigError;
}

/** Shorthand for the common single-issue case. */
export function configError(path: string, message: string, source?: string): ConfigError {
  return new ConfigError([{ path, message }], source);
}

function formatIssues(issues: readonly ConfigIssue[], source: string | undefined): string {
  const lines = issues.map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`));
  const prefix = source === undefined ? '' : `${source}: `;
  if (lines.length === 1) return `${prefix}${lines[0] ?? ''}`;
  return `${prefix}${lines.length} problems\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/**
 * Renders a key path the way an operator would write it: dots between plain keys, `[0]` for list
 * items, `["a.b"]` for keys that would be ambiguous with dots (env var names may contain anything).
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && identifier.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}
