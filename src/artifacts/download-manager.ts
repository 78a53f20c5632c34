/**
 * The governed download manager (DESIGN.md §7): checks a candidate, its source hosts, license and
 * destination, then runs a persisted job with resume, retries, redirect checks, a size cap,
 * verification, an atomic no-overwrite rename and a read-only result.
 */
import { randomUUID } from "node:crypto";
import { chmod, link, mkdir, rm, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Clock, systemClock } from "../governance/clock.js";
import { GovernanceError, isGovernanceError } from "../governance/errors.js";
import type { ArtifactCandidate } from "../governance/result-types.js";
import { loadCandidate } from "./download-candidate.js";
import { type DownloadFetch, transferOnce } from "./download-fetch.js";
import {
  type DownloadJob,
  type DownloadJobStore,
  MemoryDownloadJobStore,
  TERMINAL_DOWNLOAD_STATES,
  unknownJob,
} from "./download-job-store.js";
import { checkDestination, defaultDestination, STAGING_DIR_NAME } from "./download-path.js";
import {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadManagerOptions,
  type DownloadPlan,
  type DownloadProgress,
  type DownloadRequest,
  type DownloadResult,
} from "./download-types.js";
import { verifyDownload } from "./download-verify.js";

interface Running {
  controller: AbortController;
  done: Promise<DownloadResult>;
  candidate: ArtifactCandidate;
  hosts: ReadonlySet<string>;
  onProgress: ((progress: DownloadProgress) => void) | undefined;
}

/**
 * Runs governed downloads. Several may run at once; each returns at its terminal state.
 * @example
 * const downloads = new DownloadManager({ ledger, store, catalog, workspaceDir: join(dataDir, "workspace") });
 * const result = await downloads.download({ mcpInvocationId, candidateId, sessionId: "t1" });
 */
export class DownloadManager {
  readonly #opts: DownloadManagerOptions;
  readonly #jobs: DownloadJobStore;
  readonly #fetch: DownloadFetch;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #running = new Map<string, Running>();
  readonly #reserved = new Set<string>();

  /** @param options stores, workspace and seams */
  constructor(options: DownloadManagerOptions) {
    this.#opts = options;
    this.#jobs = options.jobStore ?? new MemoryDownloadJobStore();
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#clock = options.clock ?? systemClock;
    this.#newId = options.newId ?? randomUUID;
  }

  /** The job store (for listings and the CLI). */
  get jobs(): DownloadJobStore {
    return this.#jobs;
  }

  /**
   * Checks and downloads one candidate.
   * @param request invocation, candidate, destination, session and progress hook
   * @returns the terminal job result (failures are results, not throws)
   * @throws GovernanceError before any job exists: `NOT_FOUND` (unknown invocation or candidate),
   *   `PERMISSION_DENIED` (source mismatch, URL off the allowlist, or denied), `LICENSE_BLOCKED`,
   *   `INVALID_INPUT` (bad destination or failed invocation), `SOURCE_DISABLED`
   */
  async download(request: DownloadRequest): Promise<DownloadResult> {
    const verified = await loadCandidate(this.#opts, request.mcpInvocationId, request.candidateId);
    const { candidate } = verified;
    const wanted = request.destinationPath?.trim() ? request.destinationPath : defaultDestination(candidate);
    const destination = await checkDestination(this.#opts.workspaceDir, wanted);
    if (this.#reserved.has(destination.finalPath)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Another download is already writing '${destination.relativePath}'.`,
      );
    }
    const planId = this.#newId();
    const plan: DownloadPlan = {
      planId,
      candidate,
      license: verified.license,
      destinationPath: destination.relativePath,
      sessionId: request.sessionId,
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    };
    if (this.#opts.authorize) {
      const decision = await this.#opts.authorize(plan);
      if (!decision.allowed) {
        throw new GovernanceError("PERMISSION_DENIED", `Download refused: ${decision.reason}`);
      }
    }
    const now = this.#clock.now();
    const job: DownloadJob = {
      jobId: this.#newId(),
      planId,
      mcpInvocationId: request.mcpInvocationId,
      candidateId: candidate.candidateId,
      sourceId: candidate.sourceId,
      sourceRecordId: candidate.sourceRecordId,
      url: candidate.url,
      finalPath: destination.finalPath,
      destinationPath: destination.relativePath,
      sessionId: request.sessionId,
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
      status: "queued",
      bytesDownloaded: 0,
      attempts: 0,
      warnings: verified.warnings,
      createdAt: now,
      updatedAt: now,
    };
    await this.#jobs.create(job);
    return this.#start(job, candidate, verified.hosts, request.onProgress);
  }

  /**
   * Cancels a queued or running job; its partial file is removed.
   * @param jobId the job
   * @returns the job after cancellation (unchanged when it was already terminal)
   * @throws GovernanceError `UNKNOWN_ID` for an unknown job
   */
  async cancel(jobId: string): Promise<DownloadJob> {
    const running = this.#running.get(jobId);
    if (running) {
      running.controller.abort();
      await running.done;
    } else {
      const job = await this.#require(jobId);
      // A job left non-terminal by a crashed process is cancelled on the spot.
      if (!TERMINAL_DOWNLOAD_STATES.includes(job.status)) {
        await this.#save(job, { status: "cancelled", error: cancelledError() });
      }
    }
    return this.#require(jobId);
  }

  /**
   * Runs a failed or cancelled job again (same job and plan, candidate re-checked).
   * @param jobId the job
   * @param onProgress optional progress hook
   * @returns the terminal result of the new run
   * @throws GovernanceError `UNKNOWN_ID`; `INVALID_INPUT` when the job is not failed or cancelled; any
   *   refusal of `download` when the candidate or destination no longer passes
   */
  async retry(jobId: string, onProgress?: (progress: DownloadProgress) => void): Promise<DownloadResult> {
    const job = await this.#require(jobId);
    if ((job.status !== "failed" && job.status !== "cancelled") || this.#running.has(jobId)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Job ${jobId} is ${job.status}; only failed or cancelled jobs are retried.`,
      );
    }
    const verified = await loadCandidate(this.#opts, job.mcpInvocationId, job.candidateId);
    const destination = await checkDestination(this.#opts.workspaceDir, job.destinationPath);
    const { error: _dropped, ...rest } = job;
    const queued: DownloadJob = { ...rest, finalPath: destination.finalPath, status: "queued" };
    await this.#save(queued, {});
    return this.#start(queued, verified.candidate, verified.hosts, onProgress);
  }

  /**
   * Every job, oldest first.
   * @returns the stored jobs
   */
  list(): Promise<DownloadJob[]> {
    return this.#jobs.list();
  }

  #start(
    job: DownloadJob,
    candidate: ArtifactCandidate,
    hosts: ReadonlySet<string>,
    onProgress: ((progress: DownloadProgress) => void) | undefined,
  ): Promise<DownloadResult> {
    const controller = new AbortController();
    this.#reserved.add(job.finalPath);
    const entry: Running = {
      controller,
      candidate,
      hosts,
      onProgress,
      done: Promise.resolve(undefined as never),
    };
    entry.done = this.#run(job, entry).finally(() => {
      this.#running.delete(job.jobId);
      this.#reserved.delete(job.finalPath);
    });
    this.#running.set(job.jobId, entry);
    return entry.done;
  }

  async #run(initial: DownloadJob, entry: Running): Promise<DownloadResult> {
    let job = initial;
    const { candidate, controller } = entry;
    const staging = join(this.#opts.workspaceDir, STAGING_DIR_NAME, `${job.jobId}.part`);
    const progress = (current: DownloadJob) =>
      entry.onProgress?.({
        jobId: current.jobId,
        candidateId: current.candidateId,
        status: current.status,
        bytesDownloaded: current.bytesDownloaded,
        ...(candidate.sizeBytes === undefined ? {} : { totalBytes: candidate.sizeBytes }),
      });
    const set = async (patch: Partial<DownloadJob>) => {
      job = await this.#save(job, patch);
      progress(job);
    };
    try {
      await mkdir(dirname(staging), { recursive: true });
      const maxAttempts = this.#opts.maxAttempts ?? 4;
      let offset = await stat(staging).then(
        (info) => info.size,
        () => 0,
      );
      for (let attempt = 1; ; attempt++) {
        if (controller.signal.aborted) throw cancelledError();
        await set({ status: "running", attempts: job.attempts + 1 });
        try {
          const total = await transferOnce({
            fetch: this.#fetch,
            url: candidate.url,
            hosts: entry.hosts,
            stagingPath: staging,
            offset,
            maxBytes: this.#opts.maxBytes ?? DEFAULT_DOWNLOAD_MAX_BYTES,
            signal: controller.signal,
            onBytes: (bytes) => {
              job.bytesDownloaded = bytes;
              progress(job);
            },
          });
          job.bytesDownloaded = total;
          break;
        } catch (error) {
          if (
            !isGovernanceError(error) ||
            !error.retryable ||
            attempt >= maxAttempts ||
            controller.signal.aborted
          ) {
            throw error;
          }
          offset = await stat(staging).then(
            (info) => info.size,
            () => 0,
          );
          await set({ status: "retrying", bytesDownloaded: offset });
          const delay = (this.#opts.initialBackoffMs ?? 500) * 2 ** (attempt - 1);
          await this.#clock.sleep(delay, controller.signal).catch(() => undefined);
        }
      }
      await set({ status: "verifying" });
      const actualChecksum = await verifyDownload(staging, candidate, job.bytesDownloaded);
      await mkdir(dirname(job.finalPath), { recursive: true });
      // link() fails with EEXIST instead of replacing, so a file that appeared meanwhile is kept.
      await link(staging, job.finalPath).catch((cause: unknown) => {
        throw new GovernanceError("INVALID_INPUT", `A file appeared at '${job.destinationPath}' meanwhile.`, {
          cause,
        });
      });
      await unlink(staging);
      await chmod(job.finalPath, 0o444);
      await set({ status: "completed", actualChecksum });
    } catch (error) {
      await rm(staging, { force: true });
      const aborted = controller.signal.aborted;
      const body = aborted ? cancelledError() : asGovernanceError(error);
      await set({
        status: aborted ? "cancelled" : "failed",
        error: { code: body.code, message: body.message, retryable: body.retryable },
      });
    }
    return toResult(job);
  }

  async #save(job: DownloadJob, patch: Partial<DownloadJob>): Promise<DownloadJob> {
    const next = { ...job, ...patch, updatedAt: this.#clock.now() };
    await this.#jobs.update(next);
    return next;
  }

  async #require(jobId: string): Promise<DownloadJob> {
    const job = await this.#jobs.get(jobId);
    if (job === undefined) throw unknownJob(jobId);
    return job;
  }
}

function toResult(job: DownloadJob): DownloadResult {
  return {
    candidateId: job.candidateId,
    planId: job.planId,
    jobId: job.jobId,
    finalPath: job.finalPath,
    ...(job.actualChecksum === undefined ? {} : { actualChecksum: job.actualChecksum }),
    bytesDownloaded: job.bytesDownloaded,
    sourceId: job.sourceId,
    sourceRecordId: job.sourceRecordId,
    status: job.status as DownloadResult["status"],
    warnings: job.warnings,
    ...(job.error === undefined ? {} : { error: job.error }),
  };
}

function cancelledError(): GovernanceError {
  return new GovernanceError("CANCELLED", "The download was cancelled.");
}

function asGovernanceError(error: unknown): GovernanceError {
  if (isGovernanceError(error)) return error as GovernanceError;
  return new GovernanceError("UPSTREAM_UNAVAILABLE", error instanceof Error ? error.message : String(error), {
    cause: error,
  });
}
