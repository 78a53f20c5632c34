/**
 * The broker's quota admission: a call counts once in every window of every rule that applies to it,
 * or, when one of those windows is full, in none, and is refused with `QUOTA_EXCEEDED`. The counts
 * live in a `QuotaCounter`: this process's memory, or PostgreSQL so that every replica shares them
 * (`PostgresQuotaCounter`). See ARCHITECTURE.md, "The one call path".
 */
import { type Clock, GovernanceError, systemClock } from "../../core/index.js";
import { type QuotaRule, type QuotaWindow, quotaWindows, resolveQuotaRules } from "./quota-rules.js";

/**
 * Where quota counts live. `take` is all or nothing across its windows, atomically for every caller
 * that shares the counter.
 */
export interface QuotaCounter {
  /**
   * Counts one call in every window, unless one of them is at its limit: then nothing is counted.
   * @param windows the call's windows (keys are distinct)
   * @param now the clock's time, epoch ms (windows that ended before it may be forgotten)
   * @returns the index of the first full window, or -1 when the call was counted
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the counts cannot be read or written
   */
  take(windows: readonly QuotaWindow[], now: number): Promise<number>;
  /** Releases the counter. Idempotent. */
  close(): Promise<void>;
}

/** What the broker asks before a call runs. */
export interface QuotaAdmission {
  /**
   * Counts the call against every quota that applies to it.
   * @param call the principal (none: the single user), the source and the tool
   * @throws GovernanceError `QUOTA_EXCEEDED` (retryable, `retryAfterMs` until the full window ends)
   */
  admit(call: { principal?: string | undefined; sourceId: string; toolId: string }): Promise<void>;
}

/** The counts of one process. */
export class MemoryQuotaCounter implements QuotaCounter {
  readonly #counts = new Map<string, { start: number; end: number; calls: number }>();

  async take(windows: readonly QuotaWindow[], now: number): Promise<number> {
    // Ended windows are forgotten once the map grows, so an idle principal costs nothing for long.
    if (this.#counts.size > 10_000) {
      for (const [key, count] of this.#counts) if (count.end <= now) this.#counts.delete(key);
    }
    const current = windows.map((window) => {
      const known = this.#counts.get(window.key);
      return known?.start === window.start ? known.calls : 0;
    });
    const full = windows.findIndex((window, i) => (current[i] as number) >= window.limit);
    if (full >= 0) return full;
    windows.forEach((window, i) => {
      this.#counts.set(window.key, {
        start: window.start,
        end: window.end,
        calls: (current[i] as number) + 1,
      });
    });
    return -1;
  }

  async close(): Promise<void> {}
}

/** Options of `QuotaLimiter`. */
export interface QuotaLimiterOptions {
  /** The rules (`parseQuotaRules` reads them from text). */
  rules: readonly QuotaRule[];
  /** @default a `MemoryQuotaCounter` (this process only) */
  counter?: QuotaCounter | undefined;
  /** The windows' clock. @default systemClock */
  clock?: Clock | undefined;
}

/**
 * Quotas per principal, per tool or per source, in fixed windows (see `QuotaRule`).
 * @example
 * const quotas = new QuotaLimiter({ rules: parseQuotaRules("pubmed/search=100/1h") });
 * const broker = new Broker({ ...deps, quotas });
 */
export class QuotaLimiter implements QuotaAdmission {
  readonly #rules: readonly QuotaRule[];
  readonly #counter: QuotaCounter;
  readonly #clock: Clock;

  /**
   * @param options rules, counter and clock
   * @throws GovernanceError `INVALID_CONFIG` for an invalid rule
   */
  constructor(options: QuotaLimiterOptions) {
    this.#rules = resolveQuotaRules(options.rules);
    this.#counter = options.counter ?? new MemoryQuotaCounter();
    this.#clock = options.clock ?? systemClock;
  }

  /** The rules in force. */
  get rules(): readonly QuotaRule[] {
    return this.#rules;
  }

  async admit(call: { principal?: string | undefined; sourceId: string; toolId: string }): Promise<void> {
    const now = this.#clock.now();
    const windows = quotaWindows(this.#rules, call, now);
    if (windows.length === 0) return;
    const full = await this.#counter.take(windows, now);
    const window = windows[full];
    if (window === undefined) return;
    const who = call.principal === undefined ? "this deployment's user" : `principal '${call.principal}'`;
    throw new GovernanceError(
      "QUOTA_EXCEEDED",
      `The quota ${window.rule} of ${who} is used up for ${call.sourceId}/${call.toolId} until ${new Date(window.end).toISOString()}; nothing was sent.`,
      {
        retryable: true,
        retryAfterMs: Math.max(0, window.end - now),
        data: { rule: window.rule, limit: window.limit, windowEndsAt: new Date(window.end).toISOString() },
      },
    );
  }

  /** Closes the counter. Idempotent. */
  close(): Promise<void> {
    return this.#counter.close();
  }
}
