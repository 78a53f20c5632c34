/**
 * The three deadlines of a governed download, each on the injected clock and each cutting the transfer
 * through its `AbortSignal`: the time until response headers and the idle time between body bytes
 * (both per attempt, retryable), and the job deadline across all attempts and backoffs (not retryable).
 */
import { type Clock, GovernanceError, isGovernanceError } from "../core/index.js";

/** Time until a request's response headers arrive (DNS check included), per request: 30 s. */
export const DEFAULT_DOWNLOAD_HEADERS_TIMEOUT_MS = 30_000;
/** Longest wait for the next body bytes: 30 s. */
export const DEFAULT_DOWNLOAD_IDLE_TIMEOUT_MS = 30_000;
/** One run of a job, all attempts, retries and backoff included: 10 min. */
export const DEFAULT_DOWNLOAD_JOB_TIMEOUT_MS = 600_000;

/** The option that names each deadline (and that raises it). */
export type DownloadDeadlineName = "headersTimeoutMs" | "idleTimeoutMs" | "jobTimeoutMs";

/** The deadlines of one run, in ms of the clock; `Infinity` turns one off. */
export interface DownloadDeadlines {
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  jobTimeoutMs: number;
}

/**
 * The deadlines a manager runs with: each option, else its default.
 * @param options the manager's options (only the three deadlines are read)
 * @returns the deadlines
 * @throws GovernanceError `INVALID_INPUT` naming an option that is not a positive number of ms
 */
export function downloadDeadlines(options: Partial<DownloadDeadlines>): DownloadDeadlines {
  const pick = (name: DownloadDeadlineName, fallback: number) => {
    const value = options[name] ?? fallback;
    if (typeof value === "number" && value > 0) return value;
    throw new GovernanceError(
      "INVALID_INPUT",
      `Download option ${name} must be a positive number of milliseconds (Infinity for none); got ${String(value)}.`,
    );
  };
  return {
    headersTimeoutMs: pick("headersTimeoutMs", DEFAULT_DOWNLOAD_HEADERS_TIMEOUT_MS),
    idleTimeoutMs: pick("idleTimeoutMs", DEFAULT_DOWNLOAD_IDLE_TIMEOUT_MS),
    jobTimeoutMs: pick("jobTimeoutMs", DEFAULT_DOWNLOAD_JOB_TIMEOUT_MS),
  };
}

/**
 * The `TIMEOUT` a deadline raises: it names the limit, its value and the option that raises it.
 * @param limit the option name of the deadline that was hit
 * @param ms its value
 * @param what what did not happen in time
 * @param data more facts for `data` (bytes downloaded, attempts)
 * @returns a `TIMEOUT`, retryable unless it is the job deadline
 */
export function downloadTimeout(
  limit: DownloadDeadlineName,
  ms: number,
  what: string,
  data: Record<string, unknown> = {},
): GovernanceError {
  return new GovernanceError(
    "TIMEOUT",
    `${what} (${limit}: ${ms} ms). If the source is that slow, raise ${limit} in the download options.`,
    { retryable: limit !== "jobTimeoutMs", data: { limit, limitMs: ms, ...data } },
  );
}

/**
 * A deadline timer on the clock: when it fires, `signal` aborts with the timer's reason; it also aborts
 * when `parent` does (with the parent's reason). Arming restarts it; `disarm` leaves no timer pending.
 */
export class DeadlineTimer {
  readonly signal: AbortSignal;
  readonly #clock: Clock;
  readonly #fired = new AbortController();
  #pending: AbortController | undefined;

  /**
   * @param clock the clock whose `sleep` times the deadline
   * @param parent a signal that also stops whatever this timer guards (cancellation, an outer deadline)
   */
  constructor(clock: Clock, parent: AbortSignal) {
    this.#clock = clock;
    this.signal = AbortSignal.any([parent, this.#fired.signal]);
  }

  /**
   * Starts (or restarts) the timer.
   * @param ms the deadline; a non-finite value arms nothing
   * @param reason builds the abort reason when the timer fires (so it can report the state then)
   */
  arm(ms: number, reason: () => GovernanceError): void {
    this.disarm();
    if (!Number.isFinite(ms)) return;
    const pending = new AbortController();
    this.#pending = pending;
    this.#clock.sleep(ms, pending.signal).then(
      () => this.#fired.abort(reason()),
      () => {},
    );
  }

  /** Stops the timer without firing it. */
  disarm(): void {
    this.#pending?.abort();
    this.#pending = undefined;
  }
}

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as it aborts, for work that a
 * seam may not stop on its own (a custom `fetch` or `lookup` that ignores the signal).
 * @param promise the work
 * @param signal the signal that cuts it
 * @returns what the work returns
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Why an aborted transfer stopped: a deadline's `TIMEOUT`, else `CANCELLED`.
 * @param signal an aborted signal
 * @returns the error to report
 */
export function stoppedError(signal: AbortSignal): GovernanceError {
  const reason: unknown = signal.reason;
  if (isGovernanceError(reason) && reason.code === "TIMEOUT") return reason;
  return new GovernanceError("CANCELLED", "The download was cancelled.");
}
