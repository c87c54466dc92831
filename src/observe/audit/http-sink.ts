/**
 * The audit trail's HTTP sink (`{ type: "http" }`, docs/operations.md, "Audit sinks"): records wait
 * in a bounded queue and go out in batches, `{"schema":"switchboard.audit/v1","records":[...]}`,
 * POSTed one batch at a time, signed like hook calls (X-Switchboard-Signature over the exact body,
 * session/hooks/signature.ts) when a secret is set. A batch that fails is sent again, the same
 * records in the same order, after a back-off from 250 ms doubling to `maxBackoffMs`; nothing
 * after it goes first, so the receiver sees each chain in order. While the receiver is away the
 * queue fills to `maxQueue`; past it new records are dropped and counted (the receiver then sees a
 * gap in `seq`, and `switchboard_audit_dropped_total` says how many). A receiver that is down costs
 * two log lines (failing, back), never a request.
 */
import type { AuditHttpSink } from '../../config/audit-types.ts';
import { AUDIT_SCHEMA, type AuditOutlet, type AuditRecord } from '../../log/audit-record.ts';
import type { Logger } from '../../log/logger.ts';
import { SIGNATURE_HEADER, signHookBody } from '../../session/hooks/signature.ts';
import type { AuditPoster } from '../../transport/audit-post.ts';

const FIRST_BACKOFF_MS = 250;

/** The sink's name in metrics and logs: its host, never a path or query (they may carry a key). */
export function httpSinkName(url: string): string {
  return `http:${new URL(url).host}`;
}

/** 250 ms after the first failure, doubling, at most `max`. */
const backoffMs = (failures: number, max: number): number => Math.min(FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 20), max);

export function createHttpSink(config: AuditHttpSink, poster: AuditPoster, logger: Logger): AuditOutlet {
  const name = httpSinkName(config.url);
  const log = logger.child({ component: 'audit', sink: name });
  const queue: AuditRecord[] = [];
  let sent = 0;
  let dropped = 0;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let closed = false;

  const schedule = (ms: number) => {
    if (timer !== undefined || sending !== undefined || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, ms);
    // Records waiting must not keep a finished process alive; close() sends them.
    timer.unref();
  };

  /** Sends the head of the queue once; on failure it stays at the head and a retry is scheduled. */
  const flush = async (): Promise<void> => {
    if (sending !== undefined || queue.length === 0) return sending;
    const batch = queue.slice(0, config.batchSize);
    const body = JSON.stringify({ schema: AUDIT_SCHEMA, records: batch });
    const headers: Record<string, string> = config.secret === undefined ? {} : { [SIGNATURE_HEADER]: signHookBody(config.secret, body) };
    sending = poster.post(body, headers, config.timeoutMs).then(
      () => {
        queue.splice(0, batch.length);
        sent += batch.length;
        if (failures > 0) log.info({ after: failures }, 'audit receiver answers again; sending the queued records');
        failures = 0;
      },
      (err: unknown) => {
        if (failures === 0) log.warn({ err: (err as Error).message, queued: queue.length }, 'audit receiver failed; records are queued and retried');
        failures++;
      },
    );
    await sending;
    sending = undefined;
    if (closed) return;
    if (failures > 0) return schedule(backoffMs(failures, config.maxBackoffMs));
    if (queue.length >= config.batchSize) return void flush();
    schedule(config.flushMs);
  };

  return {
    name,
    write(record) {
      if (closed) return;
      if (queue.length >= config.maxQueue) {
        dropped++;
        // Said once per burst: the counter has the number.
        if (dropped === 1 || dropped % 1000 === 0) log.warn({ dropped, maxQueue: config.maxQueue }, 'audit queue full; records are dropped');
        return;
      }
      queue.push(record);
      // A full batch goes now (unless the receiver is failing: its back-off decides).
      if (queue.length < config.batchSize || failures > 0) return schedule(config.flushMs);
      clearTimeout(timer);
      timer = undefined;
      void flush();
    },
    stats: () => ({ sink: name, sent, queued: queue.length, dropped }),
    async close(timeoutMs) {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      const deadline = Date.now() + timeoutMs;
      // One try per batch left, within the deadline: a receiver that is down does not hold the stop.
      while (queue.length > 0 && Date.now() < deadline) {
        const before = queue.length;
        await (sending ?? flush());
        if (queue.length >= before) break;
      }
      if (queue.length > 0) log.warn({ lost: queue.length }, 'audit records not delivered at shutdown');
      await poster.close();
    },
  };
}
