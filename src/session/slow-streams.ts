/**
 * Slow answers: a request's stream still undecided after SLOW_ANSWER_SSE_MS becomes SSE (streams.ts
 * promotes it), watched by one process-wide ticker for all undecided streams instead of a timer
 * per request.
 */
import { PENDING, type OutStream } from './stream-shapes.ts';

/**
 * An answer slower than this turns its response into SSE even if nothing else came first: the
 * stream then gets keep-alive comments (so a proxy's idle timeout does not cut a long call) and,
 * for >= 2025-11-25 clients, a priming event id to resume from if the connection drops.
 */
export const SLOW_ANSWER_SSE_MS = 1_000;
const SLOW_TICK_MS = 250;

const slow = new Map<OutStream, (stream: OutStream) => void>();
let slowTicker: NodeJS.Timeout | undefined;

/** Calls `promote` once `stream` has waited SLOW_ANSWER_SSE_MS undecided. */
export function watchSlow(stream: OutStream, promote: (stream: OutStream) => void): void {
  slow.set(stream, promote);
  if (slowTicker === undefined) {
    slowTicker = setInterval(tickSlow, SLOW_TICK_MS);
    slowTicker.unref();
  }
}

/** The stream is decided or finished: no longer watched. */
export function unwatchSlow(stream: OutStream): void {
  slow.delete(stream);
}

function tickSlow(): void {
  const now = Date.now();
  for (const [stream, promote] of slow) {
    if (stream.mode !== PENDING || stream.complete) slow.delete(stream);
    else if (now - stream.openedAt >= SLOW_ANSWER_SSE_MS) {
      slow.delete(stream);
      promote(stream);
    }
  }
  if (slow.size === 0 && slowTicker !== undefined) {
    clearInterval(slowTicker);
    slowTicker = undefined;
  }
}
