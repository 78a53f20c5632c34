/**
 * Retries with exponential backoff and jitter inside one overall deadline, with cancellation of the
 * in-flight attempt. All waiting goes through the injected `Clock`.
 */

import { toGovernanceError } from "../../contract/index.js";
import {
  type Clock,
  GovernanceError,
  type GovernanceErrorOptions,
  isGovernanceError,
  systemClock,
} from "../../core/index.js";

/** How a tool call is retried. */
export interface RetryPolicy {
  /** Attempts in total, the first included. @default 3 */
  maxAttempts: number;
  /** Delay before the second attempt, in ms. @default 500 */
  initialDelayMs: number;
  /** Factor by which the delay grows per attempt. @default 2 */
  multiplier: number;
  /** Upper bound of a computed delay, in ms (a longer `Retry-After` still wins). @default 10_000 */
  maxDelayMs: number;
  /** Relative spread of each delay: 0.2 means ±20 %. @default 0.2 */
  jitter: number;
}

/** The default policy: 3 attempts, 500 ms, ×2, at most 10 s, ±20 % jitter. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  initialDelayMs: 500,
  multiplier: 2,
  maxDelayMs: 10_000,
  jitter: 0.2,
});

/** What one attempt receives. */
export interface AttemptContext {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the deadline passes or the caller cancels; pass it to the MCP client. */
  signal: AbortSignal;
}

/** What `beforeRetry` receives after a retryable failure. */
export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  attempt: number;
  /** The backoff chosen before the next attempt, already at least `failure.retryAfterMs`. */
  delayMs: number;
  /** The failure as `toGovernanceError` classified it (retryable, with `retryAfterMs` when known). */
  failure: GovernanceError;
  /** Aborted on deadline or caller cancellation, so that a wait inside the hook can stop. */
  signal: AbortSignal;
}

/** Options of `runWithRetry`. */
export interface RetryOptions<T> {
  /** Overrides of the default policy. @default DEFAULT_RETRY_POLICY */
  policy?: Partial<RetryPolicy>;
  /** @default systemClock */
  clock?: Clock;
  /** Source of jitter in [0, 1). @default Math.random */
  random?: () => number;
  /** One deadline over all attempts and waits, in ms. @default no deadline */
  timeoutMs?: number;
  /** The caller's signal; aborting it ends the run with `CANCELLED`. */
  signal?: AbortSignal;
  /** Lets a resolved value (such as an `isError` tool result) count as a failure. */
  isFailure?: (value: T) => GovernanceError | undefined;
  /**
   * Runs before the backoff sleep (for example to note a 429 on a rate-limit lease and wait for the
   * next turn); the time it takes counts towards `delayMs`, so waits are not added up.
   */
  beforeRetry?: (info: RetryInfo) => Promise<void> | void;
}

/** A successful run. */
export interface RetryOutcome<T> {
  value: T;
  /** How many attempts it took (1 when the first one succeeded). */
  attempts: number;
}

/**
 * The backoff before the attempt after `attempt`: `min(maxDelayMs, initialDelayMs × multiplier^(attempt−1))`
 * spread by ±`jitter` (and kept at most `maxDelayMs`), then raised to `retryAfterMs` when that is longer.
 * @param policy the retry policy
 * @param attempt the attempt that failed (1-based)
 * @param random a value in [0, 1)
 * @param retryAfterMs the upstream's `Retry-After`, when it sent one
 * @returns the delay in whole milliseconds
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: number,
  retryAfterMs?: number,
): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.multiplier ** (attempt - 1));
  const spread = 1 + policy.jitter * (2 * random - 1);
  const delay = Math.max(0, Math.min(policy.maxDelayMs, base * spread));
  return Math.round(Math.max(delay, retryAfterMs ?? 0));
}

type Settled<T> = { kind: "value"; value: T } | { kind: "error"; error: unknown } | { kind: "stopped" };

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, the attempts are used up, the deadline
 * passes or the caller cancels. Only failures classified as retryable (transport, 429, 5xx) are retried;
 * a late answer of an attempt that was cut off is ignored.
 * @param attempt one try; it must honour `ctx.signal` (the MCP SDK sends `notifications/cancelled`)
 * @param options policy, clock, jitter source, deadline, caller signal and hooks
 * @returns the value and the number of attempts
 * @throws {GovernanceError} `TIMEOUT` (retryable) when the deadline passes, `CANCELLED` when the caller
 *   aborts, otherwise the classified code of the last failure; `attempts` is always set
 */
export async function runWithRetry<T>(
  attempt: (ctx: AttemptContext) => Promise<T>,
  options: RetryOptions<T> = {},
): Promise<RetryOutcome<T>> {
  const policy: RetryPolicy =
    options.policy === undefined ? DEFAULT_RETRY_POLICY : { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const maxAttempts = Math.max(1, Math.floor(policy.maxAttempts));
  const { timeoutMs, signal: callerSignal } = options;
  let attempts = 0;

  if (callerSignal?.aborted) throw cancelled(0, callerSignal.reason);
  if (timeoutMs !== undefined && timeoutMs <= 0) throw timedOut(timeoutMs, 0, undefined);

  // `run` stops everything: the deadline and the caller abort it. Whoever stops it also settles what
  // the run is waiting for (`interrupt`), so that no wait needs a listener of its own on the signal.
  const run = new AbortController();
  let interrupt: (() => void) | undefined;
  const stop = (reason: GovernanceError) => {
    if (run.signal.aborted) return;
    run.abort(reason);
    interrupt?.();
  };
  const onCallerAbort = () => stop(cancelled(attempts, callerSignal?.reason));
  callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
  const deadline = timeoutMs === undefined ? undefined : clock.now() + timeoutMs;
  const stopDeadline =
    timeoutMs === undefined
      ? undefined
      : startDeadline(clock, timeoutMs, () => stop(timedOut(timeoutMs, attempts, undefined)));
  let lastError: unknown;
  const stopped = (): GovernanceError => {
    const reason = run.signal.reason as GovernanceError;
    return reason.code === "TIMEOUT"
      ? timedOut(timeoutMs ?? 0, attempts, lastError)
      : cancelled(attempts, callerSignal?.reason);
  };
  // Settles with the promise's outcome, or with `stopped` when the run stops first (a late answer is ignored).
  const untilStopped = <V>(promise: Promise<V>): Promise<Settled<V>> => {
    if (run.signal.aborted) return Promise.resolve(STOPPED);
    return new Promise<Settled<V>>((resolve) => {
      interrupt = () => resolve(STOPPED);
      promise.then(
        (value) => resolve({ kind: "value", value }),
        (error: unknown) => resolve({ kind: "error", error }),
      );
    });
  };

  try {
    for (;;) {
      attempts++;
      const settled = await untilStopped(started(() => attempt({ attempt: attempts, signal: run.signal })));
      if (settled.kind === "stopped" || run.signal.aborted) throw stopped();
      let failure: GovernanceError | undefined;
      if (settled.kind === "value") {
        failure = options.isFailure?.(settled.value);
        if (!failure) return { value: settled.value, attempts };
        lastError = settled.value;
      } else {
        lastError = settled.error;
        failure = toGovernanceError(settled.error);
      }
      // A TIMEOUT from an attempt means its time budget is gone: the deadline is one budget for all.
      if (!failure.retryable || failure.code === "TIMEOUT" || attempts >= maxAttempts) {
        throw finalError(failure, lastError, attempts);
      }
      const delayMs = retryDelayMs(policy, attempts, random(), failure.retryAfterMs);
      const wakeAt = clock.now() + delayMs;
      if (deadline !== undefined && wakeAt >= deadline) throw finalError(failure, lastError, attempts);
      const { beforeRetry } = options;
      if (beforeRetry) {
        const info: RetryInfo = { attempt: attempts, delayMs, failure, signal: run.signal };
        const outcome = await untilStopped(started(() => beforeRetry(info)));
        if (outcome.kind === "stopped" || run.signal.aborted) throw stopped();
        if (outcome.kind === "error")
          throw finalError(toGovernanceError(outcome.error), outcome.error, attempts);
      }
      const remaining = wakeAt - clock.now();
      if (remaining > 0) {
        try {
          await clock.sleep(remaining, run.signal);
        } catch {
          throw stopped();
        }
      }
      if (run.signal.aborted) throw stopped();
    }
  } finally {
    interrupt = undefined;
    callerSignal?.removeEventListener("abort", onCallerAbort);
    stopDeadline?.();
  }
}

const STOPPED: Settled<never> = Object.freeze({ kind: "stopped" });

/** The reason a deadline's `sleep` is cancelled with (an explicit one: without it, abort builds a DOMException). */
const RUN_ENDED = Symbol("run ended");

/**
 * Starts a run's deadline: the clock's `timer` when it has one, else a `sleep` cancelled through a
 * signal of its own.
 * @returns stops the deadline
 */
function startDeadline(clock: Clock, timeoutMs: number, fire: () => void): () => void {
  if (clock.timer) return clock.timer(timeoutMs, fire);
  const cleanup = new AbortController();
  clock.sleep(timeoutMs, cleanup.signal).then(fire, () => {});
  return () => cleanup.abort(RUN_ENDED);
}

/** Starts an attempt or hook now; a synchronous throw becomes its rejection. */
function started<V>(begin: () => Promise<V> | V): Promise<V> {
  try {
    return Promise.resolve(begin());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The failure of the last attempt, with the attempts made. */
function finalError(failure: GovernanceError, cause: unknown, attempts: number): GovernanceError {
  const options: GovernanceErrorOptions = { retryable: failure.retryable, attempts, cause };
  if (failure.retryAfterMs !== undefined) options.retryAfterMs = failure.retryAfterMs;
  if (failure.data !== undefined) options.data = failure.data;
  return new GovernanceError(failure.code, failure.message, options);
}

function timedOut(timeoutMs: number, attempts: number, cause: unknown): GovernanceError {
  return new GovernanceError("TIMEOUT", `The call did not finish within its ${timeoutMs} ms deadline.`, {
    retryable: true,
    attempts,
    data: { timeoutMs },
    cause,
  });
}

/** A cancelled run; a `CANCELLED` abort reason (such as `close()`'s) keeps its own message. */
function cancelled(attempts: number, cause: unknown): GovernanceError {
  const message =
    isGovernanceError(cause) && cause.code === "CANCELLED" ? cause.message : "The caller cancelled the call.";
  return new GovernanceError("CANCELLED", message, {
    retryable: false,
    attempts,
    cause,
  });
}
