/**
 * The deadlines of a correlator's pending requests under one timer (issue 34: a `setTimeout` and a
 * `clearTimeout` per request were a `Timeout` object and two timer-list operations per call).
 *
 * Slots are kept in deadline order. Requests with the same timeout arrive in deadline order, so a
 * new deadline is almost always appended; an earlier one (a shorter per-request timeout, a
 * `maxTotalMs` cap reached on a progress reset) is inserted in its place. A settled or re-armed
 * entry leaves its slot behind, stale (its `deadline` no longer equals the slot's stamp): stale
 * slots are dropped when the timer reaches them, all at once when nothing is pending, and by a
 * compaction when they outnumber the live ones or the slots already passed outnumber those held,
 * so the table (its arrays included) stays within a small multiple of what is pending.
 *
 * The one timer is armed for the earliest deadline or earlier; it is unref'd like the per-request
 * timers were, and is left armed when the last request settles (it then fires once, finds nothing
 * and is not re-armed): at one request in flight a call costs no timer operation at all.
 * Deadlines are on the monotonic clock (`performance.now()`), like Node's own timers.
 */

/** What a slot holds: `deadline` is the entry's current deadline, NaN once it settled. */
export interface Timed {
  deadline: number;
}

/** A deadline within this of now is due: Node's timers have a resolution of 1 ms. */
const RESOLUTION_MS = 1;
/** Stale slots tolerated beyond twice the live ones before a compaction. */
const SLACK = 32;

export class Deadlines<E extends Timed> {
  private readonly entries: Array<E | undefined> = [];
  private readonly stamps: number[] = [];
  private head = 0;
  private tail = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The deadline the timer is armed for (Infinity: not armed). */
  private armedFor = Infinity;
  private readonly fire = (): void => this.onTimer();
  private readonly onDue: (entry: E) => void;
  private readonly live: () => number;

  /** `onDue` is called for each entry whose deadline has come; `live` says how many entries are pending. */
  constructor(onDue: (entry: E) => void, live: () => number) {
    this.onDue = onDue;
    this.live = live;
  }

  /** Slots held, stale ones included (bounded by about twice what is pending). */
  get slots(): number {
    return this.tail - this.head;
  }

  /** Sets `entry.deadline` to `delayMs` from now, in place of any earlier one. */
  add(entry: E, delayMs: number): void {
    const deadline = performance.now() + delayMs;
    entry.deadline = deadline;
    // Compacted when stale slots outnumber the live ones, and when the slots already passed
    // (below `head`) outnumber those held: while something stays pending the table never empties,
    // and without the second test `tail`, so the arrays, would grow by one per request or progress.
    const held = this.tail - this.head;
    if (held > 2 * this.live() + SLACK || this.head > held + SLACK) this.compact();
    if (this.tail === this.head || this.stamps[this.tail - 1]! <= deadline) {
      this.entries[this.tail] = entry;
      this.stamps[this.tail++] = deadline;
    } else {
      this.insert(entry, deadline);
    }
    if (deadline < this.armedFor) this.arm(deadline);
  }

  /** The entry settled: its slot is stale. Call after it left the pending set. */
  settled(entry: E): void {
    entry.deadline = NaN;
    if (this.live() === 0) this.drop(this.head, this.tail);
  }

  /** Nothing will be pending any more (the correlator is destroyed): the timer goes too. */
  clear(): void {
    this.drop(this.head, this.tail);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  /** An earlier deadline than the last: binary search for its place, and shift the later ones up. */
  private insert(entry: E, deadline: number): void {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.stamps[mid]! <= deadline) lo = mid + 1;
      else hi = mid;
    }
    for (let i = this.tail; i > lo; i--) {
      this.entries[i] = this.entries[i - 1];
      this.stamps[i] = this.stamps[i - 1]!;
    }
    this.entries[lo] = entry;
    this.stamps[lo] = deadline;
    this.tail++;
  }

  /** Keeps only the live slots, moved down to index 0 in the same order. */
  private compact(): void {
    let to = 0;
    for (let i = this.head; i < this.tail; i++) {
      const entry = this.entries[i];
      if (entry === undefined || entry.deadline !== this.stamps[i]) continue;
      this.entries[to] = entry;
      this.stamps[to++] = this.stamps[i]!;
    }
    const end = this.tail;
    this.head = 0;
    this.tail = to;
    for (let i = to; i < end; i++) this.entries[i] = undefined;
  }

  /** Empties slots `from`..`to` (no reference kept to a settled request) and resets the ends. */
  private drop(from: number, to: number): void {
    for (let i = from; i < to; i++) this.entries[i] = undefined;
    this.head = 0;
    this.tail = 0;
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(deadline - performance.now())));
    this.timer.unref();
  }

  /** Every due entry in deadline order; then the timer for the next live deadline, if any. */
  private onTimer(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    // `onDue` may add, settle or compact: the ends are read afresh on every turn.
    while (this.head < this.tail) {
      const at = this.head;
      const entry = this.entries[at];
      const stamp = this.stamps[at]!;
      if (entry !== undefined && entry.deadline === stamp && stamp > now + RESOLUTION_MS) break;
      this.entries[at] = undefined;
      this.head = at + 1;
      if (entry !== undefined && entry.deadline === stamp) this.onDue(entry);
    }
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
      return;
    }
    const next = this.stamps[this.head]!;
    if (next < this.armedFor) this.arm(next);
  }
}

/** `onDue(entry)` for each entry whose deadline came; `live()`: how many entries are pending now. */
export function createDeadlines<E extends Timed>(onDue: (entry: E) => void, live: () => number): Deadlines<E> {
  return new Deadlines(onDue, live);
}
