/**
 * `switchboard pins list|diff|approve`: the operator's side of pinning, over the pins file of a
 * config (`gateway.pinning.file`) or a file named with `--file`. `approve` writes the file; a
 * running gateway reads it within a second (pin-registry.ts watches it). Exit codes as the rest of
 * the command: 0 done, 1 nothing matched, 2 a usage or file problem.
 */
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../config/load.ts';
import { createLogger } from '../log/logger.ts';
import { canonicalJson, PIN_KIND_NAMES, type PinKind } from './canonical.ts';
import { readPinsFile, type PinChange, type PinsDocument } from './pins-file.ts';
import { createPinRegistry, FULL_HASH, matches, type ApprovalSelector } from './pin-registry.ts';

export const PINS_USAGE = `Usage:
  switchboard pins list    [--config <file> | --file <pins file>]
  switchboard pins diff    [<server>] [--kind tool|prompt|resourceTemplate|skill] [--name <n>] [--config <file> | --file <pins file>]
  switchboard pins approve <server> [--kind ...] [--name <n>] [--hash <full hash>] [--config <file> | --file <pins file>]

  list     pins per server, and the changes waiting for a decision
  diff     what each waiting change changes, field by field, and which changes are dangerous
  approve  pin the waiting changes that match (the one seen last, per item; --hash picks one,
           by the whole SHA-256 diff prints: a prefix is refused); a running gateway serves
           them within a second

  --config <file>   the gateway's config (default switchboard.yaml): its gateway.pinning.file
  --file <path>     the pins file itself`;

export interface PinsIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

const OPTIONS = { config: { type: 'string', short: 'c' }, file: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, hash: { type: 'string' } } as const;

/** Runs the command and returns its exit code. */
export async function runPinsCommand(argv: readonly string[], io: PinsIo): Promise<number> {
  try {
    const [verb, ...rest] = argv;
    if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
      io.out(`${PINS_USAGE}\n`);
      return verb === undefined ? 2 : 0;
    }
    if (verb !== 'list' && verb !== 'diff' && verb !== 'approve') throw new UsageError(`unknown pins command "${verb}" (list, diff or approve)`);
    const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    const kind = values.kind;
    if (kind !== undefined && !PIN_KIND_NAMES.includes(kind as PinKind)) throw new UsageError(`--kind must be one of ${PIN_KIND_NAMES.join(', ')}`);
    const file = await pinsFileOf(values, io.env);
    const target = positionals[0];
    if (verb === 'list') return list(readPinsFile(file), file, io);
    const hash = values.hash?.toLowerCase();
    if (hash !== undefined && !FULL_HASH.test(hash)) throw new UsageError('--hash must be the whole hash (64 hex digits) that pins diff and GW_DEFINITION_CHANGED print, not a prefix');
    const selector = { target: target ?? '', kind: kind as PinKind | undefined, key: values.name, hash };
    if (verb === 'diff') return diff(readPinsFile(file), target === undefined ? undefined : selector, io);
    if (verb === 'approve') {
      if (target === undefined) throw new UsageError('approve needs the server whose changes to approve');
      return approve(file, selector, io);
    }
    return 2;
  } catch (error) {
    io.err(`switchboard pins: ${(error as Error).message}\n`);
    return 2;
  }
}

async function pinsFileOf(values: { config?: string | undefined; file?: string | undefined }, env: NodeJS.ProcessEnv): Promise<string> {
  if (values.file !== undefined) {
    if (values.config !== undefined) throw new UsageError('give --config or --file, not both');
    return values.file;
  }
  const config = await loadConfigFile(values.config ?? 'switchboard.yaml', { env });
  if (config.pinning === undefined) throw new UsageError('the config has no gateway.pinning');
  return config.pinning.file;
}

function list(doc: PinsDocument, file: string, io: PinsIo): number {
  io.out(`pins file: ${file}\n`);
  for (const [target, kinds] of doc.pins) {
    io.out(`${target}: ${PIN_KIND_NAMES.map((k) => `${kinds[k].size} ${k}${kinds[k].size === 1 ? '' : 's'}`).join(', ')}\n`);
  }
  io.out(doc.pending.length === 0 ? 'no changes waiting\n' : `${doc.pending.length} change(s) waiting:\n`);
  for (const c of doc.pending) io.out(`  ${describe(c)}\n`);
  return 0;
}

const describe = (c: PinChange) =>
  `${c.target} ${c.kind} "${c.key}" ${c.hash}: ${c.changed.join(', ') || 'new'}${c.dangers.length > 0 ? ` DANGEROUS (${c.dangers.map((d) => d.code).join(', ')})` : ''}`;

/** A change field by field: `-` the pinned value, `+` the new one (canonical JSON). */
function diffText(doc: PinsDocument, c: PinChange): string {
  const before = doc.pins.get(c.target)?.[c.kind].get(c.key)?.definition ?? {};
  const lines = [describe(c)];
  for (const d of c.dangers) lines.push(`  ! ${d.detail}`);
  for (const field of c.changed) {
    lines.push(`  ${field}:`);
    if (before[field] !== undefined) lines.push(`  - ${canonicalJson(before[field])}`);
    if (c.definition[field] !== undefined) lines.push(`  + ${canonicalJson(c.definition[field])}`);
  }
  return `${lines.join('\n')}\n`;
}

function diff(doc: PinsDocument, selector: ApprovalSelector | undefined, io: PinsIo): number {
  const changes = doc.pending.filter((c) => selector === undefined || matches(c, selector));
  if (changes.length === 0) io.out('no changes waiting\n');
  for (const c of changes) io.out(diffText(doc, c));
  return 0;
}

function approve(file: string, selector: ApprovalSelector, io: PinsIo): number {
  const before = readPinsFile(file);
  // The approval's audit line goes to stderr, as JSON, like the gateway's.
  const registry = createPinRegistry({ file, maxItems: Number.MAX_SAFE_INTEGER, maxPending: Number.MAX_SAFE_INTEGER }, createLogger({ level: 'info', destination: process.stderr }));
  try {
    const user = process.env.USER ?? process.env.LOGNAME ?? 'unknown';
    const approved = registry.approve(selector, `cli:${user}`);
    if (approved.length === 0) {
      io.err('switchboard pins: no waiting change matches\n');
      return 1;
    }
    for (const c of approved) io.out(`approved ${diffText(before, c)}`);
    return 0;
  } finally {
    registry.close();
  }
}
