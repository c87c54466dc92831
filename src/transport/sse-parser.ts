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
  return new Parser(options);
}

/** The parser's state: the line and event being read, the stream's last id and retry. */
class Parser implements SseParser {
  readonly maxEventBytes: number;
  readonly onevent: SseParserOptions['onevent'];
  readonly onoverflow: SseParserOptions['onoverflow'];
  readonly decoder = new StringDecoder('utf8');
  pending = '';
  first = true;
  afterCr = false;
  data: string[] = [];
  dataBytes = 0;
  eventType = '';
  lastId: string | undefined;
  retry: number | undefined;
  /** Set while an over-long event is being skipped (until its blank line). */
  overflowHead: string | undefined;
  overflowBytes = 0;
  /** True while the rest of an over-long line is being thrown away (until its line end). */
  skippingLine = false;

  constructor({ maxEventBytes, onevent, onoverflow }: SseParserOptions) {
    this.maxEventBytes = maxEventBytes;
    this.onevent = onevent;
    this.onoverflow = onoverflow;
  }

  push(chunk: Buffer | string): void {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skippingLine) {
      const end = text.search(/[\r\n]/);
      if (end === -1) {
        this.overflowBytes += Buffer.byteLength(text);
        return;
      }
      this.skippingLine = false;
      // Consume the skipped line's own end (it must not read as a blank, dispatching line).
      this.afterCr = text.charCodeAt(end) === 0x0d;
      text = text.slice(end + 1);
    }
    pushText(this, text);
  }

  reset(): void {
    this.pending = '';
    this.afterCr = false;
    this.first = true;
    this.data = [];
    this.dataBytes = 0;
    this.eventType = '';
    this.overflowHead = undefined;
    this.overflowBytes = 0;
    this.skippingLine = false;
    this.decoder.end();
  }

  get lastEventId(): string | undefined {
    return this.lastId;
  }

  get retryMs(): number | undefined {
    return this.retry;
  }
}

function overflow(p: Parser, head: string, bytes: number): void {
  p.overflowHead ??= head.slice(0, OVERFLOW_HEAD_CHARS);
  p.overflowBytes += bytes;
  p.data = [];
  p.dataBytes = 0;
}

function dispatch(p: Parser): void {
  if (p.overflowHead !== undefined) {
    const head = p.overflowHead;
    p.overflowHead = undefined;
    p.eventType = '';
    p.onoverflow(head, p.overflowBytes);
    p.overflowBytes = 0;
    return;
  }
  const type = p.eventType === '' ? 'message' : p.eventType;
  p.eventType = '';
  if (p.data.length === 0) return;
  const text = p.data.join('\n');
  p.data = [];
  p.dataBytes = 0;
  p.onevent({ event: type, data: text, id: p.lastId });
}

function onLine(p: Parser, line: string): void {
  if (line === '') {
    dispatch(p);
    return;
  }
  if (line.charCodeAt(0) === 0x3a /* ':' */) return;
  const colon = line.indexOf(':');
  const field = colon === -1 ? line : line.slice(0, colon);
  let value = colon === -1 ? '' : line.slice(colon + 1);
  if (value.charCodeAt(0) === 0x20) value = value.slice(1);
  switch (field) {
    case 'data': {
      if (p.overflowHead !== undefined) {
        p.overflowBytes += Buffer.byteLength(value) + 1;
        return;
      }
      const bytes = Buffer.byteLength(value) + 1;
      if (p.dataBytes + bytes > p.maxEventBytes + 1) {
        overflow(p, p.data.length > 0 ? p.data.join('\n') : value, p.dataBytes + bytes);
        return;
      }
      p.data.push(value);
      p.dataBytes += bytes;
      return;
    }
    case 'event':
      p.eventType = value;
      return;
    case 'id':
      if (!value.includes('\0')) p.lastId = value;
      return;
    case 'retry':
      if (/^\d+$/.test(value)) p.retry = Number(value);
      return;
    default:
      return; // unknown fields are ignored, as the standard says
  }
}

function pushText(p: Parser, text: string): void {
  if (text.length === 0) return;
  let start = 0;
  if (p.afterCr && text.charCodeAt(0) === 0x0a) start = 1;
  p.afterCr = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x0a && c !== 0x0d) continue;
    const line = p.pending + text.slice(start, i);
    p.pending = '';
    if (c === 0x0d) {
      if (i + 1 === text.length) p.afterCr = true;
      else if (text.charCodeAt(i + 1) === 0x0a) i++;
    }
    start = i + 1;
    onLine(p, line);
  }
  if (start < text.length) {
    p.pending += text.slice(start);
    // A line with no end in sight: past the limit it can only be discarded.
    if (p.pending.length > p.maxEventBytes) {
      overflow(p, p.pending.startsWith('data:') ? p.pending.slice(5).trimStart() : p.pending, Buffer.byteLength(p.pending));
      p.pending = '';
      p.skippingLine = true;
    }
  }
}
