// Loaded with `node --import` into the process under test by per-call.mjs (issue 34, item 1).
// SIGUSR2 once starts counting, twice stops and writes $PER_CALL_OUT (JSON):
//   PER_CALL_MODE=alloc: V8's sampling heap profiler (every 256 bytes, objects collected by
//     scavenges and full collections included) as bytes per allocating frame, plus the async
//     resources created (PROMISE, TickObject, Timeout, Immediate, ...) from an async_hooks counter;
//   PER_CALL_MODE=cpu: the CPU profile of the counted seconds (Profiler, 100 us sampling).
// The two are separate runs so that neither profiler's own work shows in the other's figures.
import { renameSync, writeFileSync } from 'node:fs';
import { createHook } from 'node:async_hooks';
import { Session } from 'node:inspector';
import process from 'node:process';

const mode = process.env.PER_CALL_MODE ?? 'alloc';
const out = process.env.PER_CALL_OUT;
const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
const counts = {};
let counting = false;
if (mode === 'alloc') createHook({ init(_id, type) { if (counting) counts[type] = (counts[type] ?? 0) + 1; } }).enable();

/** `name url:line` of a frame, paths shortened to node_modules/<pkg>/... or src/... */
const frameKey = (f) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/')}:${f.lineNumber + 1}`;

/** Each allocating node with its stack of frame keys, leaf last. */
function flatten(node, stack, rows) {
  const here = [...stack, frameKey(node.callFrame)];
  if (node.selfSize > 0) rows.push([node.selfSize, here]);
  for (const child of node.children) flatten(child, here, rows);
  return rows;
}

/** Written aside and renamed, so the driver never reads half a file. */
function done(text) {
  writeFileSync(`${out}.part`, text);
  renameSync(`${out}.part`, out);
}

let phase = 0;
process.on('SIGUSR2', async () => {
  phase++;
  if (phase === 1) {
    if (mode === 'cpu') {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
    } else {
      await post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
    }
    counting = true;
    return;
  }
  if (phase !== 2) return;
  counting = false;
  if (mode === 'cpu') {
    const { profile } = await post('Profiler.stop');
    done(JSON.stringify(profile));
    return;
  }
  const { profile } = await post('HeapProfiler.stopSampling');
  done(JSON.stringify({ counts, rows: flatten(profile.head, [], []) }));
});
