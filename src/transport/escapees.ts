/**
 * Descendants that left their process group. A stdio child's group is signalled as a whole, but a
 * grandchild that calls `setsid` (a daemonising wrapper, `setsid cmd &`, a double fork) leads a
 * group of its own and is reparented once its parent exits, so neither the group nor a walk of
 * parent links reaches it at the end.
 *
 * What such a process keeps is its environment. Every child is spawned with `UPSTREAM_TAG_VAR` set
 * to a tag unique to that child (this gateway process's random id, a dot, a counter), which every
 * descendant inherits unless it clears its environment on purpose. When a child's transport has
 * closed, the processes still carrying its tag are found in `/proc/<pid>/environ` and SIGKILLed;
 * when the gateway exits, every process carrying one of its tags.
 *
 * Linux only (`/proc`); elsewhere nothing is scanned. Not caught: a descendant that empties or
 * rewrites its environment before it escapes, or one running as another user (its environ is not
 * readable); docs/upstreams.md says so.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Logger } from '../log/logger.ts';

/** The environment variable that marks a stdio child and everything it starts. */
export const UPSTREAM_TAG_VAR = 'SWITCHBOARD_UPSTREAM_TAG';

const gatewayTag = randomBytes(6).toString('hex');
let counter = 0;

/** A fresh tag for the next child: unique to it, and prefixed by this gateway process's own id. */
export function nextUpstreamTag(): string {
  counter += 1;
  return `${gatewayTag}.${counter}`;
}

const PROC = '/proc';
const canScan = process.platform === 'linux';

/** `KEY=value` of a NUL-separated environ, matched exactly (`exact`) or as a prefix of the value. */
function carries(environ: Buffer, entry: string, exact: boolean): boolean {
  let at = environ.indexOf(entry);
  while (at !== -1) {
    const starts = at === 0 || environ[at - 1] === 0;
    const end = at + Buffer.byteLength(entry);
    if (starts && (!exact || end === environ.length || environ[end] === 0)) return true;
    at = environ.indexOf(entry, at + 1);
  }
  return false;
}

function pidsOf(names: string[]): number[] {
  const own = process.pid;
  const pids: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 1 && pid !== own) pids.push(pid);
  }
  return pids;
}

function kill(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false; // gone meanwhile, or not ours to signal
  }
}

/**
 * SIGKILLs every process that still carries `tag` (a child's descendants that escaped its group).
 * Resolves with their pids. Never throws: a process that vanishes mid-scan is skipped.
 */
export async function killEscapees(tag: string, logger: Logger): Promise<number[]> {
  if (!canScan) return [];
  const entry = `${UPSTREAM_TAG_VAR}=${tag}`;
  let names: string[];
  try {
    names = await readdir(PROC);
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const pid of pidsOf(names)) {
    let environ: Buffer;
    try {
      environ = await readFile(`${PROC}/${pid}/environ`);
    } catch {
      continue;
    }
    if (carries(environ, entry, true) && kill(pid)) killed.push(pid);
  }
  if (killed.length > 0) logger.warn({ pids: killed }, 'killed descendants of the upstream that had left its process group');
  return killed;
}

/**
 * Synchronously SIGKILLs every process carrying a tag of this gateway process. For
 * `process.on('exit')`, where nothing asynchronous runs any more.
 */
export function killAllEscapeesNow(): void {
  if (!canScan) return;
  const prefix = `${UPSTREAM_TAG_VAR}=${gatewayTag}.`;
  let names: string[];
  try {
    names = readdirSync(PROC);
  } catch {
    return;
  }
  for (const pid of pidsOf(names)) {
    try {
      if (carries(readFileSync(`${PROC}/${pid}/environ`), prefix, false)) kill(pid);
    } catch {
      // gone, or not readable
    }
  }
}
