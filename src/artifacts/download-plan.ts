/**
 * Download plans: what one download is about to do, built only after the candidate,
 * its hosts and license, and the destination passed every check. A plan has no side effect; the
 * approval card and the ledger row's `requestRef` are made from it.
 */

import { GovernanceError } from "../core/index.js";
import { type CandidateDeps, loadCandidate, type VerifiedCandidate } from "./download-candidate.js";
import type { DownloadJob } from "./download-job-store.js";
import { checkDestination, defaultDestination } from "./download-path.js";
import type { DownloadPlan, DownloadRequest } from "./download-types.js";

/** What planning reads. */
export interface PlanDeps extends CandidateDeps {
  workspaceDir: string;
  newId: () => string;
  /** Absolute paths that running downloads are writing. */
  reserved: ReadonlySet<string>;
}

/** A plan with what running it needs. */
export interface PlannedDownload {
  plan: DownloadPlan;
  verified: VerifiedCandidate;
  /** Absolute path of the destination. */
  finalPath: string;
}

/**
 * Checks a request and plans it.
 * @param deps ledger, CAS, catalog, session switches, workspace, id generator and reserved paths
 * @param request the download request
 * @returns the plan, the verified candidate and the absolute destination
 * @throws GovernanceError from `loadCandidate` and `checkDestination`; `INVALID_INPUT` when another
 *   running download writes the same destination
 */
export async function planDownload(deps: PlanDeps, request: DownloadRequest): Promise<PlannedDownload> {
  const verified = await loadCandidate(deps, request.mcpInvocationId, request.candidateId, request.sessionId);
  const { candidate } = verified;
  const wanted = request.destinationPath?.trim() ? request.destinationPath : defaultDestination(candidate);
  const destination = await checkDestination(deps.workspaceDir, wanted);
  if (deps.reserved.has(destination.finalPath)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Another download is already writing '${destination.relativePath}'.`,
    );
  }
  const plan: DownloadPlan = {
    planId: deps.newId(),
    mcpInvocationId: request.mcpInvocationId,
    candidate,
    license: verified.license,
    destinationPath: destination.relativePath,
    sessionId: request.sessionId,
    ...(request.principal === undefined ? {} : { principal: request.principal }),
    ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
    ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
  };
  return { plan, verified, finalPath: destination.finalPath };
}

/**
 * Re-checks a stored job's candidate and destination and rebuilds its plan (for a retry, or a run a
 * crashed process left unfinished).
 * @param deps ledger, CAS, catalog, session switches and workspace
 * @param job the stored job
 * @param sameCall keep the job's `toolCallId` (the run finishes that call) or drop it (a retry)
 * @returns the plan (with the job's `planId`), the verified candidate and the absolute destination
 * @throws GovernanceError from `loadCandidate` and `checkDestination`
 */
export async function replanJob(
  deps: Omit<PlanDeps, "newId" | "reserved">,
  job: DownloadJob,
  sameCall: boolean,
): Promise<PlannedDownload> {
  const verified = await loadCandidate(deps, job.mcpInvocationId, job.candidateId, job.sessionId);
  const destination = await checkDestination(deps.workspaceDir, job.destinationPath);
  const plan: DownloadPlan = {
    planId: job.planId,
    mcpInvocationId: job.mcpInvocationId,
    candidate: verified.candidate,
    license: verified.license,
    destinationPath: destination.relativePath,
    sessionId: job.sessionId,
    ...(job.principal === undefined ? {} : { principal: job.principal }),
    ...(job.threadId === undefined ? {} : { threadId: job.threadId }),
    ...(sameCall && job.toolCallId !== undefined ? { toolCallId: job.toolCallId } : {}),
  };
  return { plan, verified, finalPath: destination.finalPath };
}
