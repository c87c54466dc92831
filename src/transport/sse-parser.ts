/**
 * An incremental parser for `text/event-stream` bodies (WHATWG HTML, "Server-sent events",
 * section 9.2.6 "Interpreting an event stream"), fed chunk by chunk as the body streams in: no
 * stream is ever buffered whole, and one event may hold at most `maxEventBytes` of data.
 *
 * Rules kept from the standard: lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF
 * at the start of the next are one line end); a leading BOM is dropped; `:` starts a comment;
 * `data` lines are joined with LF; `id` containing NUL is ignored; `retry` takes digits only; an
 * event with an empty data buffer is not dispatched, but its `id` still becomes the last event id
 * (MCP's priming event, SEP-1699, is exactly that: an id and empty data).
 */
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** `event:` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
  /** The stream's last event id after this event (its own `id:` or an earlier one). */
  readonly id: string | undefined;
}

export interface SseParserOptions {
  /** Most bytes of data (and of one pending line) one event may hold. */
  maxEventBytes: number;
  onevent(event: SseEvent): void;
  /**
   * An event over the limit: its data is discarded up to the next blank line; `head` is its first
   * bytes (enough to read a JSON-RPC id), `bytes` how many were seen before giving up.
   */
  onoverflow(head: string, bytes: number): void;
}

export interface SseParser {
  push(chunk: Buffer | string): void;
  /**
   * A new connection continues the stream (resumption): an event cut off by the old connection is
   * discarded, as the standard says of an incomplete event at end of stream; the last event id and
   * retry are kept.
   */
  reset(): void;
  /** Last `id:` seen (the value to send as `Last-Event-ID` when resuming). */
  readonly lastEventId: string | undefined;
  /** Last valid `retry:` seen (ms). */
  readonly retryMs: number | undefined;
}

/** How much of an over-long event is kept to identify it. */
const OVERFLOW_HEAD_CHARS = 512;

export function createSseParser(options: SseParserOptions): SseParser {
  const { maxEventBytes, onevent, onoverflow } = options;
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let first = true;
  let afterCr = false;
  let data: string[] = [];
  let dataBytes = 0;
  let eventType = '';
  let lastEventId: string | undefined;
  let retryMs: number | undefined;
  /** Set while an over-long event is being skipped (until its blank line). */
  let overflowHead: string | undefined;
  let overflowBytes = 0;
  /** True while the rest of an over-long line is being thrown away (until its line end). */
  let skippingLine = false;

  const overflow = (head: string, bytes: number) => {
    overflowHead ??= head.slice(0, OVERFLOW_HEAD_CHARS);
    overflowBytes += bytes;
    data = [];
    dataBytes = 0;
  };

  const dispatch = () => {
    if (overflowHead !== undefined) {
      const head = overflowHead;
      overflowHead = undefined;
      eventType = '';
      onoverflow(head, overflowBytes);
      overflowBytes = 0;
      return;
    }
    const type = eventType === '' ? 'message' : eventType;
    eventType = '';
    if (data.length === 0) return;
    const text = data.join('\n');
    data = [];
    dataBytes = 0;
    onevent({ event: type, data: text, id: lastEventId });
  };

  const onLine = (line: string) => {
    if (line === '') {
      dispatch();
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* ':' */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'data': {
        if (overflowHead !== undefined) {
          overflowBytes += Buffer.byteLength(value) + 1;
          return;
        }
        const bytes = Buffer.byteLength(value) + 1;
        if (dataBytes + bytes > maxEventBytes + 1) {
          overflow(data.length > 0 ? data.join('\n') : value, dataBytes + bytes);
          return;
        }
        data.push(value);
        dataBytes += bytes;
        return;
      }
      case 'event':
        eventType = value;
        return;
      case 'id':
        if (!value.includes('\0')) lastEventId = value;
        return;
      case 'retry':
        if (/^\d+$/.test(value)) retryMs = Number(value);
        return;
      default:
        return; // unknown fields are ignored, as the standard says
    }
  };

  const pushText = (text: string) => {
    if (text.length === 0) return;
    let start = 0;
    if (afterCr && text.charCodeAt(0) === 0x0a) start = 1;
    afterCr = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      const line = pending + text.slice(start, i);
      pending = '';
      if (c === 0x0d) {
        if (i + 1 === text.length) afterCr = true;
        else if (text.charCodeAt(i + 1) === 0x0a) i++;
      }
      start = i + 1;
      onLine(line);
    }
    if (start < text.length) {
      pending += text.slice(start);
      // A line with no end in sight: past the limit it can only be discarded.
      if (pending.length > maxEventBytes) {
        overflow(pending.startsWith('data:') ? pending.slice(5).trimStart() : pending, Buffer.byteLength(pending));
        pending = '';
        skippingLine = true;
      }
    }
  };

  return {
    push(chunk) {
      let text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
      if (first && text.length > 0) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      if (skippingLine) {
        const end = text.search(/[\r\n]/);
        if (end === -1) {
          overflowBytes += Buffer.byteLength(text);
          return;
        }
        skippingLine = false;
        // Consume the skipped line's own end (it must not read as a blank, dispatching line).
        afterCr = text.charCodeAt(end) === 0x0d;
        text = text.slice(end + 1);
      }
      pushText(text);
    },
    reset() {
      pending = '';
      afterCr = false;
      first = true;
      data = [];
      dataBytes = 0;
      eventType = '';
      overflowHead = undefined;
      overflowBytes = 0;
      skippingLine = false;
      decoder.end();
    },
    get lastEventId() {
      return lastEventId;
    },
    get retryMs() {
      return retryMs;
    },
  };
}
