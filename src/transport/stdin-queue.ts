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
  return new Queue(stdin, maxQueuedBytes);
}

/**
 * Slots head..tail-1 wait; an emptied queue starts again at slot 0 of the same arrays, so a call
 * at one in flight makes no arrays (issue 34: a fresh pair per flush was 0.5 KB a call).
 */
class Queue implements StdinQueue {
  private lines: string[] = [];
  private ids: Array<number | undefined> = [];
  private head = 0;
  private tail = 0;
  private queued = 0;
  private flushScheduled = false;
  private room: { promise: Promise<void>; resolve: () => void } | undefined = undefined;
  private readonly stdin: Writable;
  private readonly maxQueuedBytes: number;

  constructor(stdin: Writable, maxQueuedBytes: number) {
    this.stdin = stdin;
    this.maxQueuedBytes = maxQueuedBytes;
    stdin.on('drain', this.flush);
  }

  get queuedBytes(): number {
    return this.queued;
  }

  push(line: string, id: number | undefined): boolean {
    if (this.queued > 0 && this.queued + line.length > this.maxQueuedBytes) return false;
    this.lines[this.tail] = line;
    this.ids[this.tail] = id;
    this.tail += 1;
    this.queued += line.length;
    if (this.queued >= COALESCE_LIMIT) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    return true;
  }

  withdraw(id: number): boolean {
    if (!this.stdin.writableNeedDrain) return false;
    for (let i = this.head; i < this.tail; i++) {
      if (this.ids[i] !== id) continue;
      this.queued -= (this.lines[i] as string).length;
      this.lines.splice(i, 1);
      this.ids.splice(i, 1);
      this.tail -= 1;
      return true;
    }
    return false;
  }

  /** An arrow property: the pipe's 'drain' and setImmediate call it as it is. */
  readonly flush = (): void => {
    this.flushScheduled = false;
    const { stdin, lines, ids } = this;
    while (this.head < this.tail && stdin.writable && !stdin.writableNeedDrain) {
      let chunk = '';
      while (this.head < this.tail && (chunk === '' || chunk.length + (lines[this.head] as string).length <= COALESCE_LIMIT)) {
        chunk += lines[this.head] as string;
        lines[this.head] = '';
        ids[this.head] = undefined;
        this.head += 1;
      }
      this.queued -= chunk.length;
      stdin.write(chunk);
    }
    if (this.head === this.tail) {
      this.reset(this.lines.length > KEEP_SLOTS);
      this.settleRoom();
    } else if (this.head > 1024) this.compact();
  };

  end(): void {
    const rest = this.lines.slice(this.head, this.tail).join('');
    this.reset(true);
    this.queued = 0;
    if (this.stdin.writable) this.stdin.end(rest === '' ? undefined : rest);
    this.settleRoom();
  }

  clear(): void {
    this.reset(true);
    this.queued = 0;
    this.settleRoom();
  }

  waitForRoom(): Promise<void> | undefined {
    if (!this.stdin.writableNeedDrain) return undefined;
    if (this.room === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.room = { promise, resolve };
    }
    return this.room.promise;
  }

  /** Empty: slot 0 next; `fresh`, new arrays (what was queued is let go). */
  private reset(fresh: boolean): void {
    if (fresh) {
      this.lines = [];
      this.ids = [];
    }
    this.head = 0;
    this.tail = 0;
  }

  private compact(): void {
    if (this.head === 0) return;
    this.lines = this.lines.slice(this.head, this.tail);
    this.ids = this.ids.slice(this.head, this.tail);
    this.tail -= this.head;
    this.head = 0;
  }

  private settleRoom(): void {
    const waiting = this.room;
    this.room = undefined;
    waiting?.resolve();
  }
}
