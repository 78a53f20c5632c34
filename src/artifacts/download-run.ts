/**
 * One run of a download job, from `queued` to a terminal state: transfer attempts with Range resume
 * and backoff, verification, an atomic no-overwrite rename and a read-only result. Every state change
 * is saved in the job store and reported as progress; while the job transfers its byte count is saved
 * on a tick, and a cancel written by another process stops it (`download-job-row.ts`). Failures end the
 * job; they never throw.
 */

import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { type ArtifactCandidate, toGovernanceError } from "../contract/index.js";
import type { Clock } from "../core/index.js";
import { GovernanceError, isGovernanceError } from "../core/index.js";
import { DeadlineTimer, type DownloadDeadlines, downloadTimeout, stoppedError } from "./download-deadline.js";
import { type DownloadFetch, transferOnce } from "./download-fetch.js";
import { RunningJobRow } from "./download-job-row.js";
import type { DownloadJob, DownloadJobStore } from "./download-job-store.js";
import type { DownloadPlan, DownloadProgress, DownloadResult } from "./download-types.js";
import { newStagingName, StagingFile } from "./staging-file.js";

/** Where a run's progress goes; while `active` is false no event is even built. */
export interface ProgressSink {
  readonly active: boolean;
  emit(progress: DownloadProgress): void;
}

/** What a run needs. */
export interface DownloadRunContext {
  jobs: DownloadJobStore;
  fetch: DownloadFetch;
  clock: Clock;
  workspaceDir: string;
  maxBytes: number;
  maxAttempts: number;
  initialBackoffMs: number;
  /** Headers and idle timeouts per attempt, the job deadline over the whole run. */
  deadlines: DownloadDeadlines;
  /** How often the transfer's bytes are saved and the row re-read for a cancel from elsewhere. */
  progressPersistMs: number;
  /** Refuses a host that resolves to a non-public address (before every request). */
  checkHost: (hostname: string) => Promise<void>;
  candidate: ArtifactCandidate;
  /** The source's allowed hosts (every redirect is re-checked against them). */
  hosts: ReadonlySet<string>;
  /** Aborting cancels the run (the job ends `cancelled`, its partial file removed). */
  signal: AbortSignal;
  progress: ProgressSink;
}

/**
 * Runs a job to its terminal state. A job another process ends meanwhile (its row marked `cancelled`)
 * stops as on a local cancel; a run never writes over a status another process wrote, so the first
 * terminal status in the store is the job's (a file already placed is taken back).
 * @param initial the queued job (already stored)
 * @param ctx store, seams, limits, candidate, hosts, signal and progress sink
 * @returns the job as saved at its terminal state (`completed`, `failed` or `cancelled`)
 * @throws only when the job store itself fails
 */
export async function runDownloadJob(initial: DownloadJob, ctx: DownloadRunContext): Promise<DownloadJob> {
  // A job a crashed run left keeps its staging name, so the transfer resumes from the staged bytes.
  const stagingName = initial.stagingName ?? newStagingName();
  const row = new RunningJobRow(ctx.jobs, ctx.clock, ctx.progressPersistMs, { ...initial, stagingName });
  const { candidate } = ctx;
  const signal = AbortSignal.any([ctx.signal, row.endedElsewhere]);
  let staging: StagingFile | undefined;
  const progress = () => {
    if (!ctx.progress.active) return;
    const { jobId, candidateId, status, bytesDownloaded } = row.job;
    ctx.progress.emit({
      jobId,
      candidateId,
      status,
      bytesDownloaded,
      ...(candidate.sizeBytes === undefined ? {} : { totalBytes: candidate.sizeBytes }),
    });
  };
  const set = async (patch: Partial<DownloadJob>) => {
    await row.save(patch);
    progress();
  };
  // The job deadline covers every attempt and backoff of this run; it ends the job, never retried.
  const { jobTimeoutMs, headersTimeoutMs, idleTimeoutMs } = ctx.deadlines;
  const jobTimer = new DeadlineTimer(ctx.clock, signal);
  const firstAttempt = initial.attempts;
  jobTimer.arm(jobTimeoutMs, () => {
    const attempts = row.job.attempts - firstAttempt;
    const bytes = row.job.bytesDownloaded;
    return downloadTimeout(
      "jobTimeoutMs",
      jobTimeoutMs,
      `The download did not finish within its ${jobTimeoutMs} ms job deadline: ${attempts} attempt${attempts === 1 ? "" : "s"}, ${bytes} bytes`,
      { attempts, bytesDownloaded: bytes },
    );
  });
  const transferSignal = jobTimer.signal;
  try {
    staging = await StagingFile.prepare(ctx.workspaceDir, stagingName);
    let offset = await staging.size();
    row.startTicks();
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw cancelledError(signal.reason);
      if (transferSignal.aborted) throw stoppedError(transferSignal);
      // Refused, and so stopped, when the row was cancelled elsewhere since the last write.
      await set({ status: "running", attempts: row.job.attempts + 1 });
      try {
        row.count(
          await transferOnce({
            fetch: ctx.fetch,
            url: candidate.url,
            hosts: ctx.hosts,
            staging,
            offset,
            maxBytes: ctx.maxBytes,
            clock: ctx.clock,
            headersTimeoutMs,
            idleTimeoutMs,
            checkHost: ctx.checkHost,
            signal: transferSignal,
            onBytes: (bytes) => {
              row.count(bytes);
              progress();
            },
          }),
        );
        break;
      } catch (error) {
        if (
          !isGovernanceError(error) ||
          !error.retryable ||
          attempt >= ctx.maxAttempts ||
          transferSignal.aborted
        ) {
          throw error;
        }
        offset = await staging.size();
        await set({ status: "retrying", bytesDownloaded: offset });
        const delay = ctx.initialBackoffMs * 2 ** (attempt - 1);
        await ctx.clock.sleep(delay, transferSignal).catch(() => undefined);
      }
    }
    jobTimer.disarm();
    row.stopTicks();
    await set({ status: "verifying" });
    const file = await staging.open({ create: false });
    try {
      const actualChecksum = await verifyDownload(file, candidate, row.job.bytesDownloaded);
      if (signal.aborted) throw cancelledError(signal.reason);
      const placed = await staging.publish(file, row.job.destinationPath);
      // A cancel that reached the store while the file was checked and placed came first: take it back.
      await set({ status: "completed", actualChecksum, stagingName: undefined }).catch(async (error) => {
        await staging?.unpublish(file, placed);
        throw error;
      });
    } finally {
      await file.close();
    }
  } catch (error) {
    jobTimer.disarm();
    row.stopTicks();
    await staging?.remove();
    if (!signal.aborted) {
      const body = toGovernanceError(error);
      const failed = { code: body.code, message: body.message, retryable: body.retryable };
      // Refused (and `signal` aborted) when the job was cancelled elsewhere first: it ends cancelled.
      const saved = await set({ stagingName: undefined, status: "failed", error: failed }).then(
        () => true,
        (refusal: unknown) => {
          if (!signal.aborted) throw refusal;
          return false;
        },
      );
      if (saved) return row.job;
    }
    const body = cancelledError(signal.reason);
    await row.saveCancelled({
      stagingName: undefined,
      error: { code: body.code, message: body.message, retryable: body.retryable },
    });
    progress();
  }
  return row.job;
}

/**
 * A new queued job carrying out a plan.
 * @param plan the authorized plan
 * @param ids the job id, the absolute final path, the candidate's warnings and the clock time
 * @returns the job to store
 */
export function queuedJob(
  plan: DownloadPlan,
  ids: { jobId: string; finalPath: string; warnings: string[]; now: number },
): DownloadJob {
  const { candidate } = plan;
  return {
    jobId: ids.jobId,
    planId: plan.planId,
    mcpInvocationId: plan.mcpInvocationId,
    candidateId: candidate.candidateId,
    sourceId: candidate.sourceId,
    sourceRecordId: candidate.sourceRecordId,
    url: candidate.url,
    finalPath: ids.finalPath,
    destinationPath: plan.destinationPath,
    sessionId: plan.sessionId,
    ...(plan.principal === undefined ? {} : { principal: plan.principal }),
    ...(plan.threadId === undefined ? {} : { threadId: plan.threadId }),
    ...(plan.toolCallId === undefined ? {} : { toolCallId: plan.toolCallId }),
    status: "queued",
    bytesDownloaded: 0,
    attempts: 0,
    warnings: ids.warnings,
    createdAt: ids.now,
    updatedAt: ids.now,
  };
}

/**
 * What `download` returns for a job at a terminal state.
 * @param job the job
 * @returns the result
 */
export function jobResult(job: DownloadJob): DownloadResult {
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

/**
 * The error of a cancelled download.
 * @param reason the abort reason; a `CANCELLED` one (such as `close()`'s) keeps its own message
 * @returns a `CANCELLED` error
 */
export function cancelledError(reason?: unknown): GovernanceError {
  if (isGovernanceError(reason) && reason.code === "CANCELLED") return reason;
  return new GovernanceError("CANCELLED", "The download was cancelled.");
}

/** The `verifying` step of a download: announced size and checksum against the staged bytes. */

/**
 * Checks the staged file against the candidate's size and checksum (when it carries them).
 * @param file the staging file's handle (read from its start)
 * @param candidate the candidate with optional `sizeBytes` and `checksum`
 * @param bytes the bytes the transfer counted
 * @returns `sha256:<hex>` of the file, recorded for every download
 * @throws GovernanceError `INVALID_INPUT` on a size or checksum mismatch (`data.reason`)
 */
export async function verifyDownload(
  file: FileHandle,
  candidate: ArtifactCandidate,
  bytes: number,
): Promise<string> {
  if (candidate.sizeBytes !== undefined && candidate.sizeBytes !== bytes) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Size mismatch: the candidate announced ${candidate.sizeBytes} bytes, ${bytes} arrived.`,
      { data: { reason: "size_mismatch" } },
    );
  }
  const sha256 = createHash("sha256");
  const expected = candidate.checksum;
  const other = expected && expected.algorithm !== "sha256" ? createHash(expected.algorithm) : undefined;
  for await (const chunk of file.createReadStream({ start: 0, autoClose: false })) {
    sha256.update(chunk as Buffer);
    other?.update(chunk as Buffer);
  }
  const actual = sha256.digest("hex");
  if (expected) {
    const got = other ? other.digest("hex") : actual;
    if (got !== expected.value.toLowerCase()) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Checksum mismatch: expected ${expected.algorithm}:${expected.value}, got ${expected.algorithm}:${got}.`,
        { data: { reason: "checksum_mismatch" } },
      );
    }
  }
  return `sha256:${actual}`;
}
