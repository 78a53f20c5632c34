/** The time seam: every wait and timestamp in governance logic goes through a `Clock`. */

/** A source of time and timers. Inject a `ManualClock` (from `sciencegate/testing`) in tests. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds; rejects with the signal's reason when `signal` aborts first.
   * @param ms delay in milliseconds (<= 0 resolves on the next tick)
   * @param signal optional abort signal
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire` after `ms` milliseconds unless cancelled first: a deadline that usually never fires,
   * without the promise and abort signal a `sleep` needs. Optional; without it, deadlines use `sleep`.
   * @param ms delay in milliseconds
   * @param fire what to run when it is due
   * @returns cancels the timer (idempotent)
   */
  timer?(ms: number, fire: () => void): () => void;
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
  timer: (ms, fire) => {
    const handle = setTimeout(fire, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};

/**
 * Calls `fire` after `ms` on a clock unless cancelled first: the clock's `timer` when it has one, else a
 * `sleep` cancelled through a signal of its own.
 * @param clock the clock
 * @param ms delay in milliseconds
 * @param fire what to run when it is due
 * @returns cancels the timer (idempotent)
 */
export function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.timer) return clock.timer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => undefined);
  return () => controller.abort();
}
