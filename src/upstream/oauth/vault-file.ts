/**
 * The vault's default store: one JSON file of sealed records (cluster/vault-store.ts has the
 * interface), written whole to a temporary file in the same folder with mode 0600 and renamed over
 * the old one, so a crash leaves the old file or the new one, never half of either. Writes are
 * serialised; reads come from memory (loaded once). A pending consent's expiry is kept beside it.
 *
 * The records are sealed before they get here: the file holds no token in the clear (a test greps
 * it). A file that does not parse is refused at start rather than overwritten.
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { VaultStore } from '../../cluster/vault-store.ts';

interface FileRecord {
  readonly v: string;
  /** Epoch ms after which the record is gone; absent: kept. */
  readonly until?: number;
}

/** At most this many records: a flood of started-but-never-finished consents cannot grow the file forever. */
const MAX_RECORDS = 100_000;

export async function createFileVaultStore(path: string, now: () => number = Date.now): Promise<VaultStore> {
  const records = new Map<string, FileRecord>();
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path} is not a vault file`);
    for (const [id, rec] of Object.entries(parsed as Record<string, FileRecord>)) if (typeof rec?.v === 'string') records.set(id, rec);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });

  let writing: Promise<void> = Promise.resolve();
  let seq = 0;
  const flush = () => {
    writing = writing.then(async () => {
      const tmp = `${path}.${process.pid}.${++seq}.tmp`;
      const handle = await open(tmp, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(Object.fromEntries(records)));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, path).catch(async (err: unknown) => {
        await unlink(tmp).catch(() => undefined);
        throw err;
      });
    });
    return writing;
  };
  const live = (id: string) => {
    const rec = records.get(id);
    if (rec?.until !== undefined && now() >= rec.until) {
      records.delete(id);
      return undefined;
    }
    return rec;
  };
  const sweep = () => {
    for (const id of [...records.keys()]) live(id);
    // Still full: the oldest pending consents go first (they can be started again), never a token.
    for (const [id, rec] of records) {
      if (records.size < MAX_RECORDS) break;
      if (rec.until !== undefined) records.delete(id);
    }
  };

  return {
    get: async (id) => live(id)?.v,
    async set(id, sealed, ttlSec) {
      if (!records.has(id) && records.size >= MAX_RECORDS) sweep();
      if (!records.has(id) && records.size >= MAX_RECORDS) throw new Error('the vault file is full');
      records.delete(id);
      records.set(id, ttlSec === undefined ? { v: sealed } : { v: sealed, until: now() + ttlSec * 1_000 });
      await flush();
    },
    async delete(id) {
      const had = live(id) !== undefined;
      records.delete(id);
      if (had) await flush();
      return had;
    },
    ids: async (prefix, limit) => [...records.keys()].filter((id) => id.startsWith(prefix) && live(id) !== undefined).slice(0, limit),
  };
}
