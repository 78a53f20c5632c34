import type { Clock } from "../../core/index.js";

const noop = () => {};

/**
 * One re-armable timer on an injected `Clock`. Re-arming or cancelling aborts the pending sleep,
 * so no stale timer keeps a process alive or fires into a changed state.
 */
export class RateLimitTimer {
  readonly #clock: Clock;
  readonly #onFire: () => void;
  #armed: { at: number; controller: AbortController } | undefined;

  /**
   * @param clock the time source
   * @param onFire called once each time an armed timer comes due
   */
  constructor(clock: Clock, onFire: () => void) {
    this.#clock = clock;
    this.#onFire = onFire;
  }

  /**
   * Fires at `at` (clock ms), replacing any earlier arming; arming the same time again is free.
   * @param at the due time in clock ms
   */
  arm(at: number): void {
    if (this.#armed?.at === at) return;
    this.cancel();
    const controller = new AbortController();
    this.#armed = { at, controller };
    this.#clock.sleep(at - this.#clock.now(), controller.signal).then(() => {
      if (this.#armed?.controller !== controller) return;
      this.#armed = undefined;
      this.#onFire();
    }, noop);
  }

  /** Drops the pending timer, if any. */
  cancel(): void {
    this.#armed?.controller.abort();
    this.#armed = undefined;
  }
}
