/** How long the pool waits before restarting a server that keeps failing. */

/** Backoff between quick restarts of a dead or failing server. */
export interface RestartBackoffOptions {
  /** Wait before the first restart after a failure. @default 250 */
  initialMs?: number;
  /** Upper bound of the wait. @default 10_000 */
  maxMs?: number;
  /** Growth of the wait per further quick failure. @default 2 */
  factor?: number;
  /** A connection that lived this long counts as healthy: its death starts the backoff afresh. @default 60_000 */
  resetAfterMs?: number;
}

/** {@link RestartBackoffOptions} with every default filled in. */
export type RestartBackoff = Required<RestartBackoffOptions>;

/**
 * Fills in the defaults of a restart backoff.
 * @param options partial options
 * @returns complete options (negative values are treated as 0, a factor below 1 as 1)
 */
export function resolveRestartBackoff(options: RestartBackoffOptions = {}): RestartBackoff {
  return {
    initialMs: Math.max(0, options.initialMs ?? 250),
    maxMs: Math.max(0, options.maxMs ?? 10_000),
    factor: Math.max(1, options.factor ?? 2),
    resetAfterMs: Math.max(0, options.resetAfterMs ?? 60_000),
  };
}

/**
 * The wait before the next start after `failures` consecutive quick failures.
 * @param backoff resolved backoff options
 * @param failures consecutive quick failures (0: never failed, start at once)
 * @returns `min(maxMs, initialMs * factor^(failures-1))`, or 0 when `failures` is 0
 * @example restartDelayMs(resolveRestartBackoff(), 3) // 1000
 */
export function restartDelayMs(backoff: RestartBackoff, failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** (failures - 1));
}
