/**
 * Asking for a download's approval before any side effect, shared by `artifact_download` and the
 * paper acquisition graph.
 */
import { GovernanceError } from "../core/index.js";
import { SESSION_BINDING_REASONS } from "./download-candidate.js";
import type { DownloadManager } from "./download-manager.js";
import type { DownloadApproval, DownloadRequest } from "./download-types.js";

/**
 * Runs the approval of one download. A call that already ran (a re-run of its task) asks nothing:
 * the manager replays its outcome. The plan is built inside the approval hook so that the task is
 * registered before the I/O of planning (siblings wait for its answer).
 * @param downloads the manager (`hasCall`, `prepare`)
 * @param approval the approval hook, if the runtime enforces permissions
 * @param request the download
 * @returns the denial reason, or `undefined` when the download may go on
 * @throws a refusal that binds the candidate to its session (`PERMISSION_DENIED`, `SOURCE_DISABLED`,
 *   recorded by planning) and LangGraph's interrupt; any other refusal of planning is left to the
 *   download, which records it
 */
export async function requestDownloadApproval(
  downloads: Pick<DownloadManager, "hasCall" | "prepare">,
  approval: DownloadApproval | undefined,
  request: DownloadRequest,
): Promise<string | undefined> {
  if (!approval) return undefined;
  const { threadId, toolCallId } = request;
  const decision = await approval(request.sessionId, async () => {
    if (
      threadId !== undefined &&
      toolCallId !== undefined &&
      (await downloads.hasCall(threadId, toolCallId))
    ) {
      return undefined;
    }
    try {
      return await downloads.prepare(request);
    } catch (error) {
      // A call that planning refuses has nothing to approve: the download refuses it again and records
      // the refusal as the call's outcome. The refusals that bind a candidate to its session are
      // recorded by planning itself, and end the call here.
      if (error instanceof GovernanceError && !SESSION_BINDING_REASONS.has(error.data?.reason)) {
        return undefined;
      }
      throw error;
    }
  });
  return decision === undefined || decision.allowed ? undefined : decision.reason;
}
