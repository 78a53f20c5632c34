/** Waiting for a promise, but no longer than a deadline on an injected clock or an abort. */
import type { Clock } from "../core/index.js";

/** How a {@link raceWithClock} ended. */
export type RaceOutcome<T> = { kind: "done"; value: T } | { kind: "timeout" } | { kind: "aborted" };

/**
 * Races `work` against `clock.sleep(ms)` and `signal`. The timer is cancelled when the race ends, so a
 * `ManualClock` is left without stray timers, and a late rejection of `work` is not left unhandled.
 * @param work the promise to wait for
 * @param clock the clock that measures the deadline
 * @param ms the deadline in milliseconds (`Infinity` waits without a timer)
 * @param signal optional abort signal
 * @returns `done` with the value, `timeout`, or `aborted`
 * @throws whatever `work` rejects with, when it settles first
 */
export async function raceWithClock<T>(
  work: Promise<T>,
  clock: Clock,
  ms: number,
  signal?: AbortSignal,
): Promise<RaceOutcome<T>> {
  work.catch(() => undefined);
  if (signal?.aborted) return { kind: "aborted" };
  const stop = new AbortController();
  const contenders: Promise<RaceOutcome<T>>[] = [work.then((value) => ({ kind: "done", value }))];
  if (Number.isFinite(ms)) {
    contenders.push(
      clock.sleep(ms, stop.signal).then(
        () => ({ kind: "timeout" }),
        () => new Promise<never>(() => {}),
      ),
    );
  }
  if (signal) {
    contenders.push(
      new Promise((resolve) => {
        const onAbort = () => resolve({ kind: "aborted" });
        signal.addEventListener("abort", onAbort, { once: true });
        stop.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort), {
          once: true,
        });
      }),
    );
  }
  try {
    return await Promise.race(contenders);
  } finally {
    stop.abort();
  }
}
