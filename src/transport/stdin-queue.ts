/**
 * What waits to be written to a child's stdin. A child that stops reading must not make the
 * gateway buffer without bound: lines are handed to the pipe only while it has room (no `drain`
 * pending), the rest wait here up to `maxQueuedBytes`, and a request that timed out or was
 * cancelled before its line left is withdrawn, so its bytes are freed and the child never sees it.
 *
 * Lines queued in the same turn of the event loop leave in one write (one wake-up of the child
 * instead of one per message), up to COALESCE_LIMIT characters per write.
 */
import type { Writable } from 'node:stream';

/** 16 MiB: one request of the largest body a downstream may send, then the child must read. */
export const DEFAULT_MAX_QUEUED_BYTES = 16 * 1024 * 1024;

/** Characters joined into one write: a few typical messages, small next to a pipe's buffer. */
const COALESCE_LIMIT = 16 * 1024;

/** Slots kept for reuse once the queue is empty; a longer burst's arrays are let go. */
const KEEP_SLOTS = 1024;

export interface StdinQueue {
  /**
   * Queues one NDJSON line (`id`: the upstream id of a request, for `withdraw`). False when the
   * queue is full: something is queued already and this line would take it past the cap. A lone
   * line is always taken, however large (the downstream's body limit bounds it).
   */
  push(line: string, id: number | undefined): boolean;
  /**
   * Removes a request's line that waits for a child that is not reading; true if it was still
   * queued. While the pipe flows the line leaves at the next flush anyway: it is left to go, and
   * the child sees the request and then its cancel, as it would without a queue.
   */
  withdraw(id: number): boolean;
  /** Writes what is queued as far as the pipe has room; the rest waits for `drain`. */
  flush(): void;
  /** Drops everything still queued (the child is gone). */
  clear(): void;
  /** Hands everything still queued to the pipe, room or not (it is bounded), then ends stdin. */
  end(): void;
  /**
   * Undefined while the pipe has room (the common case: no allocation, also while lines wait only
   * for this turn's coalesced write); else, while it needs draining, one promise shared by every
   * caller, settled once everything queued has been handed to the pipe (or dropped). Lets a sender
   * pace itself on a slow child, as waiting for `drain` did.
   */
  waitForRoom(): Promise<void> | undefined;
  /** Characters queued and not yet handed to the pipe. */
  readonly queuedBytes: number;
}

export function createStdinQueue(stdin: Writable, maxQueuedBytes: number): StdinQueue {
  // Slots head..tail-1 wait; an emptied queue starts again at slot 0 of the same arrays, so a
  // call at one in flight makes no arrays (issue 34: a fresh pair per flush was 0.5 KB a call).
  let lines: string[] = [];
  let ids: Array<number | undefined> = [];
  let head = 0;
  let tail = 0;
  let queued = 0;
  let flushScheduled = false;
  let room: { promise: Promise<void>; resolve: () => void } | undefined;

  const settleRoom = () => {
    const waiting = room;
    room = undefined;
    waiting?.resolve();
  };

  const compact = () => {
    if (head === 0) return;
    lines = lines.slice(head, tail);
    ids = ids.slice(head, tail);
    tail -= head;
    head = 0;
  };

  const empty = () => {
    if (lines.length > KEEP_SLOTS) {
      lines = [];
      ids = [];
    }
    head = 0;
    tail = 0;
  };

  const flush = () => {
    flushScheduled = false;
    while (head < tail && stdin.writable && !stdin.writableNeedDrain) {
      let chunk = '';
      while (head < tail && (chunk === '' || chunk.length + (lines[head] as string).length <= COALESCE_LIMIT)) {
        chunk += lines[head] as string;
        lines[head] = '';
        ids[head] = undefined;
        head += 1;
      }
      queued -= chunk.length;
      stdin.write(chunk);
    }
    if (head === tail) {
      empty();
      settleRoom();
    } else if (head > 1024) compact();
  };
  stdin.on('drain', flush);

  return {
    push(line, id) {
      if (queued > 0 && queued + line.length > maxQueuedBytes) return false;
      lines[tail] = line;
      ids[tail] = id;
      tail += 1;
      queued += line.length;
      if (queued >= COALESCE_LIMIT) flush();
      else if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
      return true;
    },
    withdraw(id) {
      if (!stdin.writableNeedDrain) return false;
      for (let i = head; i < tail; i++) {
        if (ids[i] !== id) continue;
        queued -= (lines[i] as string).length;
        lines.splice(i, 1);
        ids.splice(i, 1);
        tail -= 1;
        return true;
      }
      return false;
    },
    flush,
    end() {
      const rest = lines.slice(head, tail).join('');
      lines = [];
      ids = [];
      head = 0;
      tail = 0;
      queued = 0;
      if (stdin.writable) stdin.end(rest === '' ? undefined : rest);
      settleRoom();
    },
    clear() {
      lines = [];
      ids = [];
      head = 0;
      tail = 0;
      queued = 0;
      settleRoom();
    },
    waitForRoom() {
      if (!stdin.writableNeedDrain) return undefined;
      if (room === undefined) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        room = { promise, resolve };
      }
      return room.promise;
    },
    get queuedBytes() {
      return queued;
    },
  };
}
