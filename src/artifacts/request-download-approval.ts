/**
 * Asking for a download's approval before any side effect, shared by `artifact_download` and the
 * paper acquisition graph.
 */
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
 * @throws whatever planning throws (`NOT_FOUND`, `PERMISSION_DENIED`, …) and LangGraph's interrupt
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
    return downloads.prepare(request);
  });
  return decision === undefined || decision.allowed ? undefined : decision.reason;
}
