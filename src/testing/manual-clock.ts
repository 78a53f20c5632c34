import type { Clock } from "../core/index.js";

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to, for deterministic tests of timing logic.
 * @example
 * const clock = new ManualClock(0);
 * const done = clock.sleep(100);
 * await clock.advance(100); // `done` is now resolved
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  /** @param start initial time in ms @default 0 */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** How many sleeps are pending. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve: () => {} };
      const onAbort = () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        reject(signal?.reason);
      };
      timer.resolve = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#timers.push(timer);
    });
  }

  timer(ms: number, fire: () => void): () => void {
    const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve: fire };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise chains settle
   * between them.
   * @param ms milliseconds to advance
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

/** Lets pending promise callbacks run (several rounds, for chained awaits). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
