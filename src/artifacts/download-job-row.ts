/**
 * The store row of a running download job, which other processes read and may cancel (see
 * ARCHITECTURE.md, "State: who owns what"). Every write of the run goes through it, one at a time and
 * only over an active status, so a run never replaces a terminal status another process wrote. While
 * the job transfers, a tick every `progressPersistMs` of the clock saves its byte count and re-reads the
 * row; a row found ended elsewhere (a `cancelled` from `sciencegate jobs cancel` or a console) aborts
 * `endedElsewhere`, and the run stops as it does on a local cancel.
 */
import { type Clock, GovernanceError } from "../core/index.js";
import {
  ACTIVE_DOWNLOAD_STATES,
  type DownloadJob,
  type DownloadJobStatus,
  type DownloadJobStore,
} from "./download-job-store.js";

/** How often a running job saves its bytes and looks for a cancel from elsewhere: 1 s. */
export const DEFAULT_PROGRESS_PERSIST_MS = 1000;

/** What a run's final `cancelled` write may replace: its own active status, or a cancel from elsewhere. */
const ACTIVE_OR_CANCELLED: readonly DownloadJobStatus[] = [...ACTIVE_DOWNLOAD_STATES, "cancelled"];

/**
 * The persistence interval a manager runs with.
 * @param value the `progressPersistMs` option
 * @returns the interval in ms of the clock (`Infinity`: no ticks)
 * @throws GovernanceError `INVALID_INPUT` for a value that is not a positive number
 */
export function progressPersistInterval(value: number | undefined): number {
  const ms = value ?? DEFAULT_PROGRESS_PERSIST_MS;
  if (typeof ms === "number" && ms > 0) return ms;
  throw new GovernanceError(
    "INVALID_INPUT",
    `Download option progressPersistMs must be a positive number of milliseconds (Infinity for none); got ${String(value)}.`,
  );
}

/** The store row of one run of a job: its writes, its progress ticks and its cancellation from elsewhere. */
export class RunningJobRow {
  readonly #jobs: DownloadJobStore;
  readonly #clock: Clock;
  readonly #everyMs: number;
  readonly #elsewhere = new AbortController();
  #job: DownloadJob;
  #savedBytes: number;
  /** The run's writes and ticks, one after another, so that none lands out of order. */
  #queue: Promise<unknown> = Promise.resolve();
  #ticks: AbortController | undefined;

  /**
   * @param jobs the job store
   * @param clock times the ticks
   * @param everyMs the tick interval (`Infinity`: no ticks)
   * @param job the job as stored when the run starts
   */
  constructor(jobs: DownloadJobStore, clock: Clock, everyMs: number, job: DownloadJob) {
    this.#jobs = jobs;
    this.#clock = clock;
    this.#everyMs = everyMs;
    this.#job = job;
    this.#savedBytes = job.bytesDownloaded;
  }

  /** The job as the run knows it (the latest byte count included, saved or not). */
  get job(): DownloadJob {
    return this.#job;
  }

  /** Aborts, with a `CANCELLED` naming what happened, once the row is found ended by another writer. */
  get endedElsewhere(): AbortSignal {
    return this.#elsewhere.signal;
  }

  /**
   * Counts transferred bytes; the next tick saves them.
   * @param bytes the bytes staged so far
   */
  count(bytes: number): void {
    this.#job.bytesDownloaded = bytes;
  }

  /**
   * Saves a change of the job, only over an active status.
   * @param patch the fields to change
   * @throws GovernanceError `CANCELLED` when another writer ended the job (nothing is written, and
   *   `endedElsewhere` aborts); the store's own errors
   */
  async save(patch: Partial<DownloadJob>): Promise<void> {
    const job = this.#next(patch);
    if (!(await this.#write(job, ACTIVE_DOWNLOAD_STATES))) throw await this.#foundEnded();
    this.#job = job;
  }

  /**
   * Saves the run's end as `cancelled`, over its own active status or over a cancel from elsewhere,
   * never over a `completed` or `failed` another run wrote.
   * @param patch the fields to change (`status: "cancelled"` is set here)
   * @returns whether it was written
   */
  async saveCancelled(patch: Partial<DownloadJob>): Promise<boolean> {
    const job = this.#next({ ...patch, status: "cancelled" });
    const written = await this.#write(job, ACTIVE_OR_CANCELLED);
    this.#job = job;
    return written;
  }

  /** Starts saving bytes and re-reading the row every interval, until `stopTicks`. */
  startTicks(): void {
    if (this.#ticks !== undefined || !Number.isFinite(this.#everyMs)) return;
    const ticks = new AbortController();
    this.#ticks = ticks;
    void this.#tickLoop(ticks.signal);
  }

  /** Stops the ticks; a tick under way finishes before the next write. */
  stopTicks(): void {
    this.#ticks?.abort();
    this.#ticks = undefined;
  }

  async #tickLoop(stop: AbortSignal): Promise<void> {
    while (!stop.aborted && !this.#elsewhere.signal.aborted) {
      try {
        await this.#clock.sleep(this.#everyMs, stop);
      } catch {
        return;
      }
      // A store that fails now is tried again at the next tick; the run's own writes still throw.
      await this.#enqueue(() => this.#tick(stop)).catch(() => undefined);
    }
  }

  async #tick(stop: AbortSignal): Promise<void> {
    if (stop.aborted) return;
    const stored = await this.#jobs.get(this.#job.jobId);
    if (stored === undefined || !ACTIVE_DOWNLOAD_STATES.includes(stored.status)) {
      this.#elsewhere.abort(endedError(this.#job.jobId, stored));
      return;
    }
    if (this.#job.bytesDownloaded === this.#savedBytes) return;
    const job = { ...this.#job, updatedAt: this.#clock.now() };
    if (await this.#jobs.update(job, { ifStatus: ACTIVE_DOWNLOAD_STATES })) {
      this.#savedBytes = job.bytesDownloaded;
      this.#job.updatedAt = job.updatedAt;
    } else this.#elsewhere.abort(endedError(job.jobId, await this.#jobs.get(job.jobId)));
  }

  #next(patch: Partial<DownloadJob>): DownloadJob {
    return { ...this.#job, ...patch, updatedAt: this.#clock.now() };
  }

  async #write(job: DownloadJob, ifStatus: readonly DownloadJobStatus[]): Promise<boolean> {
    const written = await this.#enqueue(() => this.#jobs.update(job, { ifStatus }));
    if (written) this.#savedBytes = job.bytesDownloaded;
    return written;
  }

  /** After a refused write: the error of the job ended elsewhere, with `endedElsewhere` aborted. */
  async #foundEnded(): Promise<GovernanceError> {
    if (!this.#elsewhere.signal.aborted) {
      const stored = await this.#enqueue(() => this.#jobs.get(this.#job.jobId));
      this.#elsewhere.abort(endedError(this.#job.jobId, stored));
    }
    return this.#elsewhere.signal.reason as GovernanceError;
  }

  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(op);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}

/** The `CANCELLED` of a run whose row another writer ended: a cancel keeps that writer's message. */
function endedError(jobId: string, stored: DownloadJob | undefined): GovernanceError {
  if (stored?.status === "cancelled") {
    const message = stored.error?.message ?? "The download was cancelled in another process.";
    return new GovernanceError("CANCELLED", message, { data: { jobId, cancelledElsewhere: true } });
  }
  const what = stored === undefined ? "is gone from the job store" : `was ${stored.status} by another run`;
  return new GovernanceError("CANCELLED", `Job ${jobId} ${what}; this run stopped.`, {
    data: { jobId, cancelledElsewhere: true },
  });
}
