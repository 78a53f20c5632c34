/**
 * What an `artifact_download` call answers, from its job at a terminal state: a completed job is the
 * call's result (its row's normalized object is the `DownloadLedgerEntry`, read back by evidence review
 * and the research object), a failed or cancelled one the call's error.
 */
import type { McpToolResult } from "../contract/index.js";
import { GovernanceError, type GovernanceErrorCode } from "../core/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID } from "../governance/permissions/index.js";
import type { DownloadLedgerEntry } from "./artifact-ledger-types.js";
import type { DownloadJob } from "./download-job-store.js";
import { jobResult } from "./download-run.js";
import type { DownloadResult } from "./download-types.js";

/**
 * The result of a download call.
 * @param job the job at its terminal state
 * @param facts the licence of the download and its source's attribution
 * @param now when it is answered (`retrievedAt`)
 * @returns the result: the job's `DownloadLedgerEntry` with the fields every tool result has
 * @throws GovernanceError the job's error for a failed or cancelled job (`data`: its `DownloadResult`),
 *   so that its row is an error row
 */
export function downloadCallResult(
  job: DownloadJob,
  facts: { license: string; attribution: string },
  now: number,
): McpToolResult {
  const entry = downloadLedgerEntry(job);
  if (job.status !== "completed") {
    const cancelled = job.status === "cancelled";
    throw new GovernanceError(
      (job.error?.code ?? (cancelled ? "CANCELLED" : "UPSTREAM_UNAVAILABLE")) as GovernanceErrorCode,
      job.error?.message ?? `The download ended ${job.status}.`,
      {
        retryable: job.error?.retryable ?? !cancelled,
        attempts: job.attempts,
        data: { download: jobResult(job) },
      },
    );
  }
  return {
    records: [],
    warnings: [...job.warnings],
    attribution: facts.attribution,
    license: facts.license,
    retrievedAt: new Date(now).toISOString(),
    toolId: ARTIFACT_DOWNLOAD_TOOL_ID,
    untrusted: true,
    ...entry,
  };
}

/**
 * The `DownloadResult` a download call's result holds (see {@link downloadCallResult}).
 * @param result the call's result
 * @returns the download's result
 */
export function downloadResultOf(result: McpToolResult): DownloadResult {
  const entry = result as unknown as DownloadLedgerEntry;
  return {
    candidateId: entry.candidateId,
    planId: entry.planId,
    jobId: entry.jobId,
    finalPath: entry.finalPath,
    ...(entry.actualChecksum === undefined ? {} : { actualChecksum: entry.actualChecksum }),
    bytesDownloaded: entry.bytesDownloaded,
    sourceId: entry.sourceId,
    sourceRecordId: entry.sourceRecordId,
    status: entry.status,
    warnings: [...(result.warnings ?? [])],
  };
}

function downloadLedgerEntry(job: DownloadJob): DownloadLedgerEntry {
  return {
    kind: "artifact_download",
    planId: job.planId,
    jobId: job.jobId,
    mcpInvocationId: job.mcpInvocationId,
    candidateId: job.candidateId,
    sourceId: job.sourceId,
    sourceRecordId: job.sourceRecordId,
    url: job.url,
    finalPath: job.finalPath,
    destinationPath: job.destinationPath,
    ...(job.status === "completed" && job.actualChecksum !== undefined
      ? { actualChecksum: job.actualChecksum }
      : {}),
    bytesDownloaded: job.bytesDownloaded,
    status: job.status as DownloadLedgerEntry["status"],
  };
}
