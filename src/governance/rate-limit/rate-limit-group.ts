import { parseRetryAfterMs } from "../../contract/index.js";
import type { Clock } from "../../core/index.js";
import { GovernanceError } from "../../core/index.js";
import type { ResolvedRateLimit } from "./rate-limit-config.js";
import { RateLimitQueue, type RateLimitQueueEntry } from "./rate-limit-queue.js";
import { RateLimitTimer } from "./rate-limit-timer.js";

/** The default cooldown after a 429 without a usable `Retry-After` (at least this, or the pending pacing). */
const DEFAULT_COOLDOWN_MS = 1000;

/** One admitted call in a rate-limit group. One lease covers every retry of that call. */
export interface RateLimitLease {
  /** Time in ms from `acquire()` to admission, measured by the limiter's clock. */
  readonly queueWaitMs: number;
  /** Frees the slot. Idempotent: a second call does nothing. */
  release(): void;
  /**
   * Records that an attempt got HTTP 429: the group admits nobody until the cooldown ends.
   * @param retryAfter the `Retry-After` value (seconds, or an HTTP-date); when absent or unparseable
   *   the cooldown is the larger of one second and the pending pacing
   */
  noteRateLimited(retryAfter?: string | number | null): void;
  /**
   * Waits for the group's cooldown and pacing before a retry attempt, keeping this lease's slot;
   * the retry then counts as a start for pacing. Not needed before the first attempt.
   * @param signal aborts the wait
   * @throws the signal's reason on abort; GovernanceError `CANCELLED` when the lease is released
   */
  waitForTurn(signal?: AbortSignal): Promise<void>;
}

/** A snapshot of a group, for tests and the CLI. */
export interface RateLimitStats {
  /** Leases admitted and not yet released. */
  active: number;
  /** Callers waiting for admission. */
  queued: number;
  /** When a 429 cooldown is running: the time (clock ms) it ends. */
  cooldownUntil?: number;
}

interface Waiter {
  readonly enqueuedAt: number;
  admit(lease: RateLimitLease): void;
  fail(reason: unknown): void;
}

interface TurnWaiter {
  start(): void;
  cancel(): void;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new GovernanceError("CANCELLED", "The caller cancelled the call.");
}

/**
 * The admission state of one rate-limit group: active slots, the FIFO of waiters, pacing of starts
 * and the 429 cooldown. Retry turns of admitted leases go before new admissions, because they
 * already hold a slot and would otherwise deadlock behind waiters that need one.
 *
 * Timers: one for the next due start and one for the queue head's deadline. Waiters join in FIFO
 * order with the same timeout, so the head always expires first and one timer serves the queue.
 */
export class RateLimitGroup {
  readonly #name: string;
  readonly #limits: ResolvedRateLimit;
  readonly #clock: Clock;
  readonly #queue = new RateLimitQueue<Waiter>();
  readonly #turns = new RateLimitQueue<TurnWaiter>();
  #active = 0;
  #lastStartAt: number | undefined;
  #cooldownUntil: number | undefined;
  readonly #startTimer: RateLimitTimer;
  readonly #deadlineTimer: RateLimitTimer;

  /**
   * @param name the group name (used in error messages)
   * @param limits the group's resolved limits
   * @param clock the time source for waits, pacing and cooldowns
   */
  constructor(name: string, limits: ResolvedRateLimit, clock: Clock) {
    this.#name = name;
    this.#limits = limits;
    this.#clock = clock;
    this.#startTimer = new RateLimitTimer(clock, () => this.#drain());
    this.#deadlineTimer = new RateLimitTimer(clock, () => this.#expire());
  }

  /**
   * Waits for a slot in FIFO order.
   * @param signal aborts the wait and removes the caller from the queue
   * @returns the lease; call `release()` when the call is done
   * @throws GovernanceError `RATE_LIMIT_QUEUE_FULL` or `RATE_LIMIT_QUEUE_TIMEOUT` (retryable); the
   *   signal's reason (or `CANCELLED`) on abort
   */
  acquire(signal?: AbortSignal): Promise<RateLimitLease> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const now = this.#clock.now();
    if (this.#queue.size === 0 && this.#turns.size === 0 && this.#canStart(now)) {
      return Promise.resolve(this.#admit(0));
    }
    if (this.#queue.size >= this.#limits.maxQueueDepth) {
      const { maxQueueDepth } = this.#limits;
      return Promise.reject(
        new GovernanceError(
          "RATE_LIMIT_QUEUE_FULL",
          `Rate-limit group '${this.#name}' has ${this.#queue.size} waiting calls (maxQueueDepth ${maxQueueDepth}).`,
          { retryable: true, data: { group: this.#name, maxQueueDepth } },
        ),
      );
    }
    return new Promise<RateLimitLease>((resolve, reject) => {
      const settle =
        <T>(outcome: (value: T) => void) =>
        (value: T) => {
          signal?.removeEventListener("abort", onAbort);
          outcome(value);
        };
      const onAbort = () => {
        if (!this.#queue.remove(entry)) return;
        entry.value.fail(abortReason(signal!));
        this.#drain();
      };
      const entry = this.#queue.push({ enqueuedAt: now, admit: settle(resolve), fail: settle(reject) });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#drain();
    });
  }

  /** @returns active and queued counts, and the cooldown end while one runs */
  stats(): RateLimitStats {
    const stats: RateLimitStats = { active: this.#active, queued: this.#queue.size };
    if (this.#cooldownUntil !== undefined && this.#cooldownUntil > this.#clock.now()) {
      stats.cooldownUntil = this.#cooldownUntil;
    }
    return stats;
  }

  /** The earliest time the next start may happen (cooldown end or pacing). */
  #nextStartAt(): number {
    const paced = this.#lastStartAt === undefined ? 0 : this.#lastStartAt + this.#limits.intervalMs;
    return Math.max(this.#cooldownUntil ?? 0, paced);
  }

  #canStart(now: number): boolean {
    return this.#active < this.#limits.maxConcurrent && this.#nextStartAt() <= now;
  }

  #admit(queueWaitMs: number): RateLimitLease {
    this.#active++;
    this.#lastStartAt = this.#clock.now();
    const turns = new Set<RateLimitQueueEntry<TurnWaiter>>();
    let released = false;
    return {
      queueWaitMs,
      release: () => {
        if (released) return;
        released = true;
        this.#active--;
        for (const turn of turns) if (this.#turns.remove(turn)) turn.value.cancel();
        this.#drain();
      },
      noteRateLimited: (retryAfter) => this.#noteRateLimited(retryAfter),
      waitForTurn: (signal) =>
        released ? Promise.reject(leaseReleased()) : this.#waitForTurn(turns, signal),
    };
  }

  #noteRateLimited(retryAfter: string | number | null | undefined): void {
    const now = this.#clock.now();
    const pendingPacing =
      this.#lastStartAt === undefined ? 0 : this.#lastStartAt + this.#limits.intervalMs - now;
    const cooldownMs = parseRetryAfterMs(retryAfter, now) ?? Math.max(DEFAULT_COOLDOWN_MS, pendingPacing);
    this.#cooldownUntil = Math.max(this.#cooldownUntil ?? 0, now + cooldownMs);
    this.#drain();
  }

  #waitForTurn(turns: Set<RateLimitQueueEntry<TurnWaiter>>, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#turns.size === 0 && this.#nextStartAt() <= this.#clock.now()) {
      this.#lastStartAt = this.#clock.now();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const settle = (outcome: () => void) => {
        turns.delete(entry);
        signal?.removeEventListener("abort", onAbort);
        outcome();
      };
      const onAbort = () => {
        if (!this.#turns.remove(entry)) return;
        settle(() => reject(abortReason(signal!)));
        this.#drain();
      };
      const entry = this.#turns.push({
        start: () => settle(resolve),
        cancel: () => settle(() => reject(leaseReleased())),
      });
      turns.add(entry);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#drain();
    });
  }

  /** Starts everyone who may start now, then arms the timers for what is left. */
  #drain(): void {
    for (;;) {
      const hasTurn = this.#turns.size > 0;
      const headFits = this.#queue.size > 0 && this.#active < this.#limits.maxConcurrent;
      const now = this.#clock.now();
      const at = this.#nextStartAt();
      if (!hasTurn && !headFits) {
        // Nobody can start on a timer: the head waits for a release, which drains again.
        this.#startTimer.cancel();
        break;
      }
      if (at > now) {
        this.#startTimer.arm(at);
        break;
      }
      if (hasTurn) {
        this.#lastStartAt = now;
        this.#turns.shift()!.start();
      } else {
        const waiter = this.#queue.shift()!;
        waiter.admit(this.#admit(now - waiter.enqueuedAt));
      }
    }
    const head = this.#queue.peek();
    const timeoutMs = this.#limits.queueTimeoutMs;
    if (head === undefined || timeoutMs === undefined) this.#deadlineTimer.cancel();
    else this.#deadlineTimer.arm(head.enqueuedAt + timeoutMs);
  }

  /** Refuses every waiter whose queue timeout has passed (the oldest first), then lets the rest move up. */
  #expire(): void {
    const timeoutMs = this.#limits.queueTimeoutMs ?? Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    for (
      let head = this.#queue.peek();
      head && head.enqueuedAt + timeoutMs <= now;
      head = this.#queue.peek()
    ) {
      this.#queue.shift();
      head.fail(
        new GovernanceError(
          "RATE_LIMIT_QUEUE_TIMEOUT",
          `Waited ${timeoutMs} ms in rate-limit group '${this.#name}' without being admitted.`,
          { retryable: true, data: { group: this.#name, queueTimeoutMs: timeoutMs } },
        ),
      );
    }
    this.#drain();
  }
}

function leaseReleased(): GovernanceError {
  return new GovernanceError("CANCELLED", "The rate-limit lease was released before its retry could start.");
}
