/**
 * A session's bounded SSE replay buffer (2025-03-26 "Resumability and Redelivery").
 *
 * Every SSE event the session writes is appended with an id `<stream>-<seq>`: the stream number
 * says which logical stream (a POST's response stream, or the standalone GET stream) it belongs to,
 * and `seq` is one counter for the whole session. A client that lost a stream sends GET with
 * `Last-Event-ID`; `after()` gives back that stream's later events. The buffer keeps at most
 * `maxEvents` events and `maxBytes` of data, dropping the oldest first, so a session's memory is
 * bounded however long its streams run.
 */

export interface LoggedEvent {
  readonly stream: number;
  readonly seq: number;
  readonly id: string;
  /** The serialised message; '' for a priming event. */
  readonly data: string;
}

export interface EventLog {
  /** Records an event and returns its id. */
  append(stream: number, data: string): string;
  /** Events of `stream` with a sequence number above `seq`, oldest first. */
  after(stream: number, seq: number): LoggedEvent[];
  /** The sequence number of the newest event appended (0 before any). */
  readonly lastSeq: number;
  /** The sequence number of the oldest event still held (Infinity when empty). */
  readonly oldestSeq: number;
  readonly size: number;
}

export interface EventCursor {
  readonly stream: number;
  readonly seq: number;
}

/** Parses a `Last-Event-ID` value written by this log; undefined for anything else. */
export function parseEventId(text: string): EventCursor | undefined {
  const match = EVENT_ID.exec(text);
  if (match === null) return undefined;
  return { stream: Number(match[1]), seq: Number(match[2]) };
}

const EVENT_ID = /^(\d{1,15})-(\d{1,15})$/;

export function createEventLog(maxEvents: number, maxBytes: number): EventLog {
  // A plain array used as a queue: `head` marks the oldest live slot; the array is compacted when
  // half of it is dead, so eviction is O(1) amortised without a ring's index arithmetic.
  let events: LoggedEvent[] = [];
  let head = 0;
  let bytes = 0;
  let seq = 0;

  const evict = () => {
    while (events.length - head > maxEvents || (bytes > maxBytes && events.length - head > 1)) {
      const old = events[head];
      head++;
      if (old !== undefined) bytes -= old.data.length;
    }
    if (head > 64 && head * 2 > events.length) {
      events = events.slice(head);
      head = 0;
    }
  };

  return {
    append(stream, data) {
      seq++;
      const id = `${stream}-${seq}`;
      events.push({ stream, seq, id, data });
      bytes += data.length;
      evict();
      return id;
    },
    after(stream, afterSeq) {
      const out: LoggedEvent[] = [];
      for (let i = head; i < events.length; i++) {
        const e = events[i];
        if (e !== undefined && e.stream === stream && e.seq > afterSeq) out.push(e);
      }
      return out;
    },
    get lastSeq() {
      return seq;
    },
    get oldestSeq() {
      return events[head]?.seq ?? Infinity;
    },
    get size() {
      return events.length - head;
    },
  };
}
