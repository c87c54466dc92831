/**
 * server.json inputs (arguments, environment variables, headers, URL variables) rendered as config
 * strings. What the user must supply becomes a `${VAR}` reference, so the config names what to set
 * and never holds it: a secret is always a reference, even when the document offers a value.
 */
import type { RegistryArgument, RegistryInput } from './server-json.ts';

/** A variable the written config references: the user sets it in the gateway's environment. */
export interface RequiredVariable {
  readonly name: string;
  readonly description: string | undefined;
  readonly secret: boolean;
  /** false: the reference has a default (`${NAME:-default}`). */
  readonly required: boolean;
}

/** The variables one entry references, each once, in order of first use. */
export interface VariableSet {
  /** The variable an input labelled `label` is read from: its name, prefixed with the entry's. */
  nameOf(label: string): string;
  add(variable: RequiredVariable): void;
  list(): RequiredVariable[];
}

/**
 * `entry`: the server's name in the config. Every variable is prefixed with it (`weather` and
 * `X-API-Key` -> `WEATHER_X_API_KEY`), so two servers that both ask for `{api_key}` do not read
 * one `${API_KEY}`, and one never receives the other's key. A name that already starts with the
 * prefix keeps it once (`github` and `GITHUB_TOKEN` -> `GITHUB_TOKEN`).
 */
export function createVariableSet(entry = ''): VariableSet {
  const byName = new Map<string, RequiredVariable>();
  const prefix = entry === '' ? '' : toVariableName(entry);
  return {
    nameOf(label) {
      const name = toVariableName(label);
      return prefix === '' || name === prefix || name.startsWith(`${prefix}_`) ? name : `${prefix}_${name}`;
    },
    add(variable) {
      const known = byName.get(variable.name);
      if (known === undefined || (!known.required && variable.required)) byName.set(variable.name, variable);
    },
    list: () => [...byName.values()],
  };
}

/** `X-API-Key` -> `X_API_KEY`, `--db-host` -> `DB_HOST`: a valid, readable variable name. */
export function toVariableName(label: string): string {
  const name = label.replace(/^-+/, '').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase();
  return /^[A-Z_]/.test(name) ? name : `V_${name}`;
}

/** A literal for the config: `${` would start a reference, so it is written `$${`. */
export function literal(text: string): string {
  return text.replaceAll('${', () => '$${');
}

/**
 * The config string for one input, or undefined when it can be left out (optional, no default):
 * a fixed `value` (its `{name}` placeholders rendered from `variables`), else a reference for what
 * is secret or required (`${NAME}`, or `${NAME:-default}` when a non-secret default exists), else
 * the default.
 */
export function renderInput(input: RegistryInput & { variables?: Record<string, RegistryInput> | undefined }, label: string, variables: VariableSet): string | undefined {
  const name = variables.nameOf(label);
  const secret = input.isSecret === true;
  if (input.value !== undefined && !secret) return renderTemplate(input.value, input.variables ?? {}, variables);
  if (secret || input.isRequired === true) return reference(name, input, variables);
  return input.default === undefined ? undefined : literal(input.default);
}

function reference(name: string, input: RegistryInput, variables: VariableSet): string {
  const secret = input.isSecret === true;
  const fallback = !secret && input.default !== undefined && /^[^}$]*$/.test(input.default) ? input.default : undefined;
  variables.add({ name, description: input.description, secret, required: fallback === undefined });
  return fallback === undefined ? `\${${name}}` : `\${${name}:-${fallback}}`;
}

/**
 * `value` with `{name}` placeholders: each known placeholder becomes its own rendering (a reference
 * when it must be supplied); an unknown one stays as written, as the schema says.
 */
export function renderTemplate(template: string, inputs: Record<string, RegistryInput>, variables: VariableSet): string {
  let out = '';
  let last = 0;
  for (const match of template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    const input = Object.hasOwn(inputs, match[1]!) ? inputs[match[1]!] : undefined;
    if (input === undefined) continue;
    out += literal(template.slice(last, match.index));
    out += renderInput({ ...input, isRequired: input.isRequired ?? input.default === undefined }, match[1]!, variables) ?? '';
    last = match.index + match[0].length;
  }
  return out + literal(template.slice(last));
}

/** Command-line words for a package's or runtime's arguments; optional ones without a value are left out. */
export function renderArguments(args: readonly RegistryArgument[] | undefined, variables: VariableSet): string[] {
  const words: string[] = [];
  for (const arg of args ?? []) {
    const label = arg.type === 'named' ? (arg.name ?? arg.valueHint ?? 'arg') : (arg.valueHint ?? arg.name ?? 'arg');
    const value = renderInput(arg, label, variables);
    if (arg.type === 'positional') {
      if (value !== undefined) words.push(value);
      continue;
    }
    if (arg.name === undefined) continue;
    if (value !== undefined) words.push(literal(arg.name), value);
    else if (arg.isRequired === true) words.push(literal(arg.name));
  }
  return words;
}
