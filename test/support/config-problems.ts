/** The messages a config document is refused with (`path: message` each), for the config unit tests. */
import { isConfigError } from '../../src/config/config-error.ts';

/** Runs `parse` and returns the refusal's issues; fails the test if it was accepted. */
export function problemsOf(parse: () => unknown): string[] {
  try {
    parse();
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error('expected a ConfigError');
}
