/** Accumulates time per named phase while enabled, to show where a broker call spends its time. */
import { performance } from "node:perf_hooks";

/** Time spent in one phase over a measurement window. */
export interface PhaseTotal {
  phase: string;
  /** Sum of the phase's durations in ms. */
  totalMs: number;
  /** How many times the phase ran. */
  count: number;
}

/**
 * Sums the durations of phases between `start()` and `stop()`. Meant for sequential calls only:
 * phases of concurrent calls overlap, so their sums would not add up to the wall time.
 */
export class PhaseTimer {
  readonly #totals = new Map<string, PhaseTotal>();
  #enabled = false;

  /** Clears the totals and starts recording. */
  start(): void {
    this.#totals.clear();
    this.#enabled = true;
  }

  /**
   * Stops recording.
   * @returns the totals per phase, in first-seen order
   */
  stop(): PhaseTotal[] {
    this.#enabled = false;
    return [...this.#totals.values()].map((total) => ({ ...total }));
  }

  /**
   * Runs `fn`, adding its duration to `phase` while recording is on.
   * @param phase the phase name
   * @param fn the timed operation
   * @returns what `fn` returns
   * @throws whatever `fn` throws (the duration still counts)
   */
  /**
   * Runs `fn`, adding only its synchronous part (until it returns its promise) to `phase`: for work
   * whose promise settles later for reasons that are not its own cost (a queue's next turn).
   * @param phase the phase name
   * @param fn the timed operation
   * @returns what `fn` returns
   */
  timeSync<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    if (!this.#enabled) return fn();
    const start = performance.now();
    try {
      return fn();
    } finally {
      this.#add(phase, performance.now() - start);
    }
  }

  async time<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    if (!this.#enabled) return fn();
    const start = performance.now();
    try {
      return await fn();
    } finally {
      this.#add(phase, performance.now() - start);
    }
  }

  #add(phase: string, ms: number): void {
    const total = this.#totals.get(phase) ?? { phase, totalMs: 0, count: 0 };
    total.totalMs += ms;
    total.count += 1;
    this.#totals.set(phase, total);
  }
}
