/**
 * Graceful shutdown of a service that runs calls (the broker, the download manager): it admits calls
 * until `close()` begins, lets the running ones finish, and aborts those still running after a grace
 * period. `close()` settles only once every admitted call has settled, so whatever a call still has to
 * write (its ledger row) is written before the owner closes its stores.
 */
import { setMaxListeners } from "node:events";
import type { Clock } from "./clock.js";
import { GovernanceError } from "./errors.js";

/** How long `close()` lets running calls finish before it cancels them, in ms. */
const DEFAULT_CLOSE_GRACE_MS = 5_000;

/**
 * The calls in flight of one service.
 * @example
 * const inflight = new InflightCalls(clock, "broker");
 * const outcome = await inflight.run((signal) => callUpstream(signal), request.signal);
 * await inflight.close(5_000); // then close the stores
 */
export class InflightCalls {
  readonly #clock: Clock;
  readonly #owner: string;
  readonly #running = new Set<Promise<unknown>>();
  /** One controller per running call that has its own (see `sharedSignal`). */
  readonly #controllers = new Set<AbortController>();
  /** The signal of calls without a signal of their own, with `sharedSignal`; cut at close. */
  readonly #shared: AbortController | undefined;
  #closing: Promise<void> | undefined;

  /**
   * @param clock measures the grace period
   * @param owner names the service in error messages (`"broker"`)
   * @param options `sharedSignal`: a call the caller gave no signal gets one signal shared by all such
   *   calls (no controller per call). Only for a service whose calls remove every listener they add
   *   to it (the broker's do; a listener left per call would pile up). @default false
   */
  constructor(clock: Clock, owner: string, options: { sharedSignal?: boolean } = {}) {
    this.#clock = clock;
    this.#owner = owner;
    if (options.sharedSignal) {
      this.#shared = new AbortController();
      setMaxListeners(0, this.#shared.signal);
    }
  }

  /** Whether `close()` has begun: no call is admitted any more. */
  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  /** How many admitted calls have not settled yet. */
  get size(): number {
    return this.#running.size;
  }

  /**
   * Runs one call, unless `close()` has begun.
   * @param work the call; its signal aborts when the caller's does or when `close()` cuts the call
   *   (the reason is then a `CANCELLED` GovernanceError)
   * @param callerSignal the caller's own signal, when it has one
   * @returns what `work` returns
   * @throws GovernanceError `CANCELLED` (data `{ reason: "closed" }`) without running `work` once
   *   `close()` has begun
   */
  run<T>(work: (signal: AbortSignal) => Promise<T>, callerSignal?: AbortSignal): Promise<T> {
    if (this.#closing) {
      return Promise.reject(
        new GovernanceError("CANCELLED", `The ${this.#owner} is closed; the call was not started.`, {
          data: { reason: "closed" },
        }),
      );
    }
    // Without a signal of its own (and with `sharedSignal`), a call takes the shared one: no controller.
    const shared = callerSignal === undefined ? this.#shared : undefined;
    const controller = shared ?? new AbortController();
    // The caller's abort is forwarded by hand (AbortSignal.any is costly on a hot path).
    const forward = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) forward();
    else callerSignal?.addEventListener("abort", forward, { once: true });
    const running = Promise.resolve().then(() => work(controller.signal));
    this.#running.add(running);
    if (!shared) this.#controllers.add(controller);
    const forget = () => {
      this.#running.delete(running);
      if (!shared) this.#controllers.delete(controller);
      callerSignal?.removeEventListener("abort", forward);
    };
    running.then(forget, forget);
    return running;
  }

  /**
   * Stops admitting calls, waits for the running ones, and after `graceMs` aborts those still running.
   * Idempotent: a second call returns the first one's promise.
   * @param graceMs how long running calls may take to finish on their own @default 5000
   * @returns once every admitted call has settled
   */
  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.#closing ??= this.#drain(graceMs);
    return this.#closing;
  }

  async #drain(graceMs: number): Promise<void> {
    if (this.#running.size === 0) return;
    const idle = this.#idle();
    const timer = new AbortController();
    const graceOver = this.#clock.sleep(graceMs, timer.signal).then(
      () => true,
      () => false,
    );
    const mustCut = await Promise.race([idle.then(() => false), graceOver]);
    timer.abort();
    if (mustCut) {
      const message = `The ${this.#owner} closed while the call was running (grace period ${graceMs} ms).`;
      const reason = new GovernanceError("CANCELLED", message, { data: { reason: "closed", graceMs } });
      this.#shared?.abort(reason);
      for (const controller of this.#controllers) controller.abort(reason);
    }
    await idle;
  }

  async #idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
