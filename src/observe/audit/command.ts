/**
 * `switchboard audit verify <file>`: checks the hash chains in a file of JSON lines (a file the log
 * sink's lines were written to, or records a receiver stored one per line; `-` reads standard
 * input), chain by chain, and names the first record that breaks one: edited, missing, repeated,
 * moved, or not a record at all (chain.ts). Read as a stream, so a file of any size is checked in
 * constant memory (but the last hash per chain). Exit codes: 0 intact, 1 broken, 2 usage or file.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createVerifier } from './chain.ts';

export const AUDIT_USAGE = `Usage:
  switchboard audit verify <file>   check the audit records' hash chains in a JSON-lines file ("-": stdin)

  Lines that carry no audit record are skipped; chains of several replicas and restarts may be
  interleaved. Exit code 0: every chain intact; 1: a record is broken (named); 2: usage or file.`;

export interface AuditIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly stdin?: NodeJS.ReadableStream;
}

export async function runAuditCommand(argv: readonly string[], io: AuditIo): Promise<number> {
  const [verb, file, ...rest] = argv;
  if (verb === '--help' || verb === '-h' || verb === 'help') return io.out(`${AUDIT_USAGE}\n`), 0;
  if (verb !== 'verify' || file === undefined || rest.length > 0) return io.err(`${AUDIT_USAGE}\n`), 2;
  const input = file === '-' ? (io.stdin ?? process.stdin) : createReadStream(file, { encoding: 'utf8' });
  const verifier = createVerifier();
  try {
    const lines = createInterface({ input, crlfDelay: Infinity });
    for await (const line of lines) {
      if (!verifier.push(line)) {
        lines.close();
        break;
      }
    }
  } catch (err) {
    io.err(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return 2;
  }
  const report = verifier.report();
  const chains = [...report.chains].map(([id, n]) => `${id} (${n})`).join(', ') || 'none';
  if (report.broken !== undefined) {
    const { line, chain, seq, why } = report.broken;
    io.out(`BROKEN at line ${line}${chain === undefined ? '' : `, chain ${chain}`}${seq === undefined ? '' : `, seq ${seq}`}: ${why}\n`);
    io.out(`${report.records} record(s) intact before it; chains: ${chains}\n`);
    return 1;
  }
  io.out(`OK: ${report.records} record(s) in ${report.chains.size} chain(s): ${chains}\n`);
  if (report.startsLate.length > 0) io.out(`note: ${report.startsLate.join(', ')} start after seq 1 here (an earlier part is elsewhere); checked from their first record on\n`);
  return 0;
}
