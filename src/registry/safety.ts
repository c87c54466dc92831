/**
 * What a registry document may put on the command line `registry add` writes. A server.json is
 * written by whoever publishes it: its `runtimeArguments` go before the package or image, where
 * they are options of `docker`, `npx` or `uvx` themselves (`--privileged`, `-v /:/host`,
 * `--network host`, a second `--security-opt`; `--package`, `--registry`, `--from`, `--index-url`)
 * and can undo the containment the entry promises or swap what runs. So, by default, only
 * `-e`/`--env NAME[=VALUE]` passes for an OCI image and nothing for npm or PyPI; anything more is
 * refused with the exact command, and written only when the user says so. Pure functions.
 */

/** A word as a POSIX shell would need it to read it back as one word. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./${}-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line of an entry (`command` and `args`), as printed to the user. */
export function commandLineOf(entry: Record<string, unknown>): string {
  const command = typeof entry.command === 'string' ? entry.command : '';
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  return [command, ...args].map(shellWord).join(' ');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:=[^]*)?$/;

/** The runtime words of an OCI image beyond `-e`/`--env NAME[=VALUE]` (`--env=NAME=VALUE` too). */
export function beyondEnv(words: readonly string[]): string[] {
  const extra: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const next = words[i + 1];
    if ((word === '-e' || word === '--env') && next !== undefined && ENV_ASSIGNMENT.test(next)) {
      i++;
      continue;
    }
    if (word.startsWith('--env=') && ENV_ASSIGNMENT.test(word.slice(6))) continue;
    extra.push(word);
  }
  return extra;
}

/** Whether `name` can be an environment variable's name (it is written as `-e <name>` for docker). */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}
