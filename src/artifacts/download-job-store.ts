/**
 * Download jobs: the persisted state of one governed download, and the store port
 * with its in-memory default. The SQLite store lives in `download-sqlite-job-store.ts`.
 */
import { GovernanceError } from "../core/index.js";

/** Life cycle of a job: `queued → running | retrying → verifying → completed | failed | cancelled`. */
export type DownloadJobStatus =
  | "queued"
  | "running"
  | "retrying"
  | "verifying"
  | "completed"
  | "failed"
  | "cancelled";

/** The states a job never leaves on its own (only `retry` moves a failed or cancelled job on). */
export const TERMINAL_DOWNLOAD_STATES: readonly DownloadJobStatus[] = ["completed", "failed", "cancelled"];

/** The states of a job on its way: what a run may still write over (see `DownloadJobUpdateOptions`). */
export const ACTIVE_DOWNLOAD_STATES: readonly DownloadJobStatus[] = [
  "queued",
  "running",
  "retrying",
  "verifying",
];

/** Options of `DownloadJobStore.update`. */
export interface DownloadJobUpdateOptions {
  /**
   * Writes only when the stored job's status is one of these, checked and written in one step, so that
   * a writer never replaces a status another process wrote after its own read (a running job's progress
   * never overwrites a `cancelled` written by `sciencegate jobs cancel`). @default any status
   */
  ifStatus?: readonly DownloadJobStatus[] | undefined;
}

/** The error of a failed or cancelled job. */
export interface DownloadJobError {
  code: string;
  message: string;
  retryable: boolean;
}

/** One download job as stored. */
export interface DownloadJob {
  jobId: string;
  /** The approved plan this job carries out (one candidate, one destination). */
  planId: string;
  mcpInvocationId: string;
  candidateId: string;
  sourceId: string;
  sourceRecordId: string;
  url: string;
  /** Absolute path of the finished file (not yet existing until `completed`). */
  finalPath: string;
  /** The path relative to the workspace, as the model sees it. */
  destinationPath: string;
  sessionId: string;
  /** Who the download is for (its call's principal): a retry or a continued run acts for it again. */
  principal?: string | undefined;
  threadId?: string;
  toolCallId?: string;
  status: DownloadJobStatus;
  /**
   * Name of the partial file in `<workspace>/.staging`, random per run so no link can be planted at it
   * in advance; kept while a crashed run may resume, cleared at a terminal state.
   */
  stagingName?: string | undefined;
  bytesDownloaded: number;
  /** Transfer attempts made so far (over every `retry`). */
  attempts: number;
  /** `sha256:<hex>` of the finished file. */
  actualChecksum?: string;
  /** Non-fatal notes, e.g. a license taken from the result instead of the candidate. */
  warnings: string[];
  error?: DownloadJobError;
  /** Clock milliseconds. */
  createdAt: number;
  updatedAt: number;
}

/**
 * The job store port. Methods reject with `UPSTREAM_UNAVAILABLE` after `close()`. Every backend must
 * pass `describeDownloadJobStoreConformance` (`sciencegate/testing/conformance`).
 */
/** Which jobs `DownloadJobStore.list` returns; an absent field selects every job. */
export interface DownloadJobFilter {
  /** Only the jobs made from candidates of this invocation (`DownloadJob.mcpInvocationId`). */
  mcpInvocationId?: string;
}

/**
 * Where download jobs live between the approval and the transfer: in memory, SQLite or PostgreSQL
 * (`MemoryDownloadJobStore`, `SqliteDownloadJobStore`, `PostgresDownloadJobStore`), all with these semantics.
 */
export interface DownloadJobStore {
  /**
   * Stores a new job.
   * @throws GovernanceError `DUPLICATE_ID` for a known `jobId`
   */
  create(job: DownloadJob): Promise<void>;
  /**
   * Replaces a stored job whole (a field absent from `job` is absent afterwards); its place in `list` stays.
   * With `ifStatus`, only when the stored status is one of those (one atomic step).
   * @param job the job as it is to be stored
   * @param options `ifStatus`: the statuses the stored job may have for the write to happen
   * @returns true when the job was written; false when `ifStatus` did not hold (nothing changed)
   * @throws GovernanceError `UNKNOWN_ID` for an unknown `jobId`
   * @example
   * // Progress of a running job, unless another process has cancelled it meanwhile:
   * const written = await jobs.update(job, { ifStatus: ACTIVE_DOWNLOAD_STATES });
   */
  update(job: DownloadJob, options?: DownloadJobUpdateOptions): Promise<boolean>;
  /**
   * The job, or `undefined`. A graph tool call's job is found by `callJobId(threadId, toolCallId)`.
   * Returns a copy: changing it changes nothing stored.
   */
  get(jobId: string): Promise<DownloadJob | undefined>;
  /**
   * Every job, or those `filter` selects, oldest first: by `createdAt`, ties in the order they were
   * created. Copies, as `get`.
   * @param filter `mcpInvocationId`: only the jobs made from that invocation's candidates
   * @example
   * const offered = await jobs.list({ mcpInvocationId: row.invocationId });
   */
  list(filter?: DownloadJobFilter): Promise<DownloadJob[]>;
  /** Releases the store. Idempotent. */
  close(): Promise<void>;
}

/** Jobs in a `Map`; they die with the process. */
export class MemoryDownloadJobStore implements DownloadJobStore {
  readonly #jobs = new Map<string, DownloadJob>();
  #closed = false;

  /** @inheritdoc */
  async create(job: DownloadJob): Promise<void> {
    this.#open();
    if (this.#jobs.has(job.jobId))
      throw new GovernanceError("DUPLICATE_ID", `Job ${job.jobId} already exists.`);
    this.#jobs.set(job.jobId, structuredClone(job));
  }

  /** @inheritdoc */
  async update(job: DownloadJob, options: DownloadJobUpdateOptions = {}): Promise<boolean> {
    this.#open();
    const stored = this.#jobs.get(job.jobId);
    if (stored === undefined) throw unknownJob(job.jobId);
    if (options.ifStatus !== undefined && !options.ifStatus.includes(stored.status)) return false;
    this.#jobs.set(job.jobId, structuredClone(job));
    return true;
  }

  /** @inheritdoc */
  async get(jobId: string): Promise<DownloadJob | undefined> {
    this.#open();
    const job = this.#jobs.get(jobId);
    return job === undefined ? undefined : structuredClone(job);
  }

  /** @inheritdoc */
  async list(filter: DownloadJobFilter = {}): Promise<DownloadJob[]> {
    this.#open();
    const { mcpInvocationId } = filter;
    // The sort is stable and a Map iterates in insertion order, so equal `createdAt`s keep creation order.
    return [...this.#jobs.values()]
      .filter((job) => mcpInvocationId === undefined || job.mcpInvocationId === mcpInvocationId)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((job) => structuredClone(job));
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw closedJobStoreError();
  }
}

/**
 * Marks a job cancelled in the store unless it has ended (so a job that ended meanwhile keeps its end):
 * how a process that does not run the job cancels it. A run of the job in another process finds the
 * mark at its next progress tick and stops as on a local cancel: partial file removed, job `cancelled`,
 * its ledger row written by that process.
 * @param jobs the job store
 * @param jobId the job
 * @param cancel the cancellation (a `CANCELLED` error whose message the job keeps) and the clock time
 * @returns the job as now stored, and whether this call cancelled it
 * @throws GovernanceError `UNKNOWN_ID` for an unknown job
 * @example
 * const { job, cancelled } = await cancelStoredJob(store, jobId, {
 *   error: new GovernanceError("CANCELLED", "Cancelled from the console."),
 *   now: Date.now(),
 * });
 */
export async function cancelStoredJob(
  jobs: DownloadJobStore,
  jobId: string,
  cancel: { error: GovernanceError; now: number },
): Promise<{ job: DownloadJob; cancelled: boolean }> {
  const job = await jobs.get(jobId);
  if (job === undefined) throw unknownJob(jobId);
  if (!ACTIVE_DOWNLOAD_STATES.includes(job.status)) return { job, cancelled: false };
  const { error, now } = cancel;
  const marked: DownloadJob = {
    ...job,
    status: "cancelled",
    error: { code: error.code, message: error.message, retryable: false },
    updatedAt: now,
  };
  if (await jobs.update(marked, { ifStatus: ACTIVE_DOWNLOAD_STATES }))
    return { job: marked, cancelled: true };
  const stored = await jobs.get(jobId);
  if (stored === undefined) throw unknownJob(jobId);
  return { job: stored, cancelled: false };
}

/**
 * The error every job store method throws once the store is closed.
 * @returns an `UPSTREAM_UNAVAILABLE` error
 */
export function closedJobStoreError(): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", "The job store is closed.");
}

/**
 * The error for a job id nobody knows.
 * @param jobId the id asked for
 * @returns an `UNKNOWN_ID` error
 */
export function unknownJob(jobId: string): GovernanceError {
  return new GovernanceError(
    "UNKNOWN_ID",
    `No download job '${jobId}'; list them with 'sciencegate jobs list'.`,
  );
}
