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
 * pass `describeDownloadJobStoreConformance` (`sciencegate/testing`).
 */
export interface DownloadJobStore {
  /**
   * Stores a new job.
   * @throws GovernanceError `DUPLICATE_ID` for a known `jobId`
   */
  create(job: DownloadJob): Promise<void>;
  /**
   * Replaces a stored job whole (a field absent from `job` is absent afterwards); its place in `list` stays.
   * @throws GovernanceError `UNKNOWN_ID` for an unknown `jobId`
   */
  update(job: DownloadJob): Promise<void>;
  /**
   * The job, or `undefined`. A graph tool call's job is found by `callJobId(threadId, toolCallId)`.
   * Returns a copy: changing it changes nothing stored.
   */
  get(jobId: string): Promise<DownloadJob | undefined>;
  /** Every job, oldest first: by `createdAt`, ties in the order they were created. Copies, as `get`. */
  list(): Promise<DownloadJob[]>;
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
  async update(job: DownloadJob): Promise<void> {
    this.#open();
    if (!this.#jobs.has(job.jobId)) throw unknownJob(job.jobId);
    this.#jobs.set(job.jobId, structuredClone(job));
  }

  /** @inheritdoc */
  async get(jobId: string): Promise<DownloadJob | undefined> {
    this.#open();
    const job = this.#jobs.get(jobId);
    return job === undefined ? undefined : structuredClone(job);
  }

  /** @inheritdoc */
  async list(): Promise<DownloadJob[]> {
    this.#open();
    // The sort is stable and a Map iterates in insertion order, so equal `createdAt`s keep creation order.
    return [...this.#jobs.values()]
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
