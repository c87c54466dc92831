/**
 * `--cpu-prof DIR`: the gateway runs under `node --cpu-prof`; this sums the profiles written in DIR
 * since the run started and lists the functions with the most self time (idle excluded).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTimes {
  readonly files: number;
  /** Main-thread time outside idle, in microseconds. */
  readonly busy: number;
  /** Self time per `function file:line`, in microseconds, largest first. */
  readonly top: ReadonlyArray<readonly [string, number]>;
}

/** Self time per function over the profiles written in `dir` since `since` (ms epoch). */
export function readSelfTimes(dir: string, since: number, root: string): SelfTimes {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => `${dir}/${f}`)
    .filter((f) => statSync(f).mtimeMs >= since);
  const self = new Map<string, number>();
  let busy = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    profile.samples.forEach((id, i) => {
      const frame = nodes.get(id);
      if (frame === undefined || frame.functionName === '(idle)') return;
      const us = profile.timeDeltas[i] ?? 0;
      const where = frame.url === '' ? '' : ` ${frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(root, '')}:${frame.lineNumber + 1}`;
      const key = `${frame.functionName || '(anonymous)'}${where}`;
      self.set(key, (self.get(key) ?? 0) + us);
      busy += us;
    });
  }
  return { files: files.length, busy, top: [...self].sort((a, b) => b[1] - a[1]) };
}

/** The `count` largest self times as report lines: ms, share of busy time, function. */
export function formatTop(times: SelfTimes, count: number): string[] {
  return times.top
    .slice(0, count)
    .map(([key, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / times.busy).toFixed(1).padStart(5)}%  ${key}`);
}

export function summariseProfiles(dir: string, since: number, root: string, top = 30): string {
  const times = readSelfTimes(dir, since, root);
  const heading = `CPU profiles: ${times.files} file(s) in ${dir}; ${(times.busy / 1000).toFixed(0)} ms busy on the main thread. Top self time:`;
  return [heading, ...formatTop(times, top)].join('\n');
}
