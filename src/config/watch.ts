/**
 * Watches a config file for changes (for reload). The folder is watched, not the file: editors and
 * config-management tools replace a file by renaming a new one over it, which ends a watch on the
 * old inode. Bursts of events (write + rename + chmod) are debounced into one call.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export interface ConfigWatcher {
  close(): void;
}

/** 250 ms: one save produces several events within a few ms; a person cannot save twice faster. */
export const CONFIG_WATCH_DEBOUNCE_MS = 250;

/** Calls `onchange` once per burst of changes to `path`. Never throws; `onerror` hears watch failures. */
export function watchConfigFile(
  path: string,
  onchange: () => void,
  onerror: (error: Error) => void,
  debounceMs = CONFIG_WATCH_DEBOUNCE_MS,
): ConfigWatcher {
  const absolute = resolve(path);
  const name = basename(absolute);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(absolute), { persistent: false }, (_event, file) => {
      // Some platforms omit the name; then any change in the folder counts.
      if (file !== null && file.toString() !== name) return;
      clearTimeout(timer);
      timer = setTimeout(onchange, debounceMs);
    });
    watcher.on('error', onerror);
  } catch (error) {
    onerror(error instanceof Error ? error : new Error(String(error)));
  }
  return {
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
