/**
 * Turns zod issues into operator-facing ConfigIssues: one line per problem, led by the key path,
 * worded for someone editing a YAML file rather than a TypeScript type.
 */
import type { z } from 'zod';
import { formatPath, type ConfigIssue } from './config-error.ts';

export function toConfigIssues(issues: readonly z.core.$ZodIssue[], input: unknown): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = issue.path;
    switch (issue.code) {
      case 'unrecognized_keys':
        // One line per key, each with its own full path, so the operator sees exactly what to delete.
        for (const key of issue.keys) out.push({ path: formatPath([...path, key]), message: 'unknown key' });
        break;
      case 'invalid_key': {
        const inner = issue.issues[0];
        out.push({ path: formatPath(path), message: inner?.message ?? issue.message });
        break;
      }
      case 'invalid_union': {
        const discriminated = issue as { options?: unknown[] };
        const message = Array.isArray(discriminated.options)
          ? `expected ${discriminated.options.map((option) => JSON.stringify(option)).join(' or ')}`
          : issue.message;
        out.push({ path: formatPath(path), message });
        break;
      }
      case 'invalid_type': {
        const actual = valueAt(input, path);
        // zod's own wording ("Invalid input: expected object, received string") where the schema has none.
        const expected = issue.message.startsWith('Invalid input') ? `expected ${issue.expected}` : issue.message;
        out.push({ path: formatPath(path), message: actual === undefined ? 'required' : `${expected}, got ${describe(actual)}` });
        break;
      }
      default:
        out.push({ path: formatPath(path), message: issue.message });
    }
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  // Never echo a string: it may have come from an environment variable holding a secret.
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object') return 'an object';
  return typeof value;
}
