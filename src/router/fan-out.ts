/**
 * Fan-out with a per-target deadline: ask every target at once, wait for each at most `deadlineMs`,
 * and return every outcome in the order the targets were given (config order), so merging is
 * deterministic whatever order the answers arrive in. A slow or failing target is an outcome, not
 * a failure of the whole call.
 */

export type FanOutOutcome<T> =
  | { readonly target: string; readonly ok: true; readonly value: T }
  | { readonly target: string; readonly ok: false; readonly reason: string };

/** Runs `ask` for each target concurrently; never rejects. */
export async function fanOut<T>(
  targets: readonly string[],
  ask: (target: string) => Promise<T>,
  deadlineMs: number,
): Promise<Array<FanOutOutcome<T>>> {
  return Promise.all(
    targets.map(async (target): Promise<FanOutOutcome<T>> => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<FanOutOutcome<T>>((resolve) => {
        timer = setTimeout(() => resolve({ target, ok: false, reason: `no answer within ${deadlineMs} ms` }), deadlineMs);
      });
      try {
        const answer = ask(target).then(
          (value): FanOutOutcome<T> => ({ target, ok: true, value }),
          (err: unknown): FanOutOutcome<T> => ({ target, ok: false, reason: err instanceof Error ? err.message : String(err) }),
        );
        return await Promise.race([answer, deadline]);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}
