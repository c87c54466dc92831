/**
 * What a benchmark report says about where it ran: the CPU, and which Switchboard source it ran
 * (the commit, plus any uncommitted change under src/ that the figures include).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineFacts {
  /** CPU model name. */
  readonly model: string;
  /** True when /proc/cpuinfo says the kernel runs under a hypervisor. */
  readonly virtual: boolean;
  /** `src/cli.ts at <commit>[ plus uncommitted changes in ...]`. */
  readonly source: string;
  /** Load average now, as printed in reports. */
  readonly load: string;
}

export function machineFacts(root: string): MachineFacts {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  const dirty = git(['status', '--porcelain', '--', 'src']).split('\n').filter(Boolean).map((l) => l.slice(3));
  const revision = git(['rev-parse', '--short', 'HEAD']) || 'unknown';
  return {
    model,
    virtual: /hypervisor/.test(cpuinfo),
    source: `\`src/cli.ts\` at ${revision}${dirty.length > 0 ? ` plus uncommitted changes in ${dirty.join(', ')}` : ''}`,
    load: loadAverage(),
  };
}

export const loadAverage = (): string => os.loadavg().map((n) => n.toFixed(2)).join(' ');
