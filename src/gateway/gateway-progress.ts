/**
 * Download progress as MCP progress: `artifact_download` writes `artifact_download_progress` events to
 * its config's `writer` (in a graph, LangGraph's custom stream); for a `tools/call` whose client sent a
 * `progressToken`, the gateway turns them into `notifications/progress` related to that request.
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ArtifactDownloadProgressEvent } from "../artifacts/index.js";

/** What the relay uses of the MCP request: its `_meta` (the token) and `sendNotification`. */
export type ProgressRequest = Pick<
  RequestHandlerExtra<ServerRequest, ServerNotification>,
  "_meta" | "sendNotification"
>;

/** The `writer` of one call and a way to wait for what it sent. */
export interface ProgressRelay {
  /** The built-ins' custom-stream writer: download progress events become notifications. */
  writer: (chunk: unknown) => void;
  /** Settles once every notification written so far is sent (or failed), so none trails the answer. */
  settled(): Promise<void>;
}

/**
 * The progress relay of one `tools/call`. MCP wants each notification's `progress` to increase, so an
 * event that adds no bytes (a status change, a retry) sends nothing; the final answer follows anyway.
 * @param request the MCP request
 * @param onError receives a notification that could not be sent (the call goes on)
 * @returns the relay, or `undefined` when the client sent no `progressToken` (it wants none)
 */
export function progressRelay(
  request: ProgressRequest,
  onError: (error: unknown) => void,
): ProgressRelay | undefined {
  const progressToken = request._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let sentBytes = -1;
  // Chained, so notifications leave in the order the bytes arrived.
  let sending = Promise.resolve();
  return {
    writer(chunk) {
      if (!isDownloadProgress(chunk) || chunk.bytesDownloaded <= sentBytes) return;
      sentBytes = chunk.bytesDownloaded;
      const { jobId, candidateId, status, bytesDownloaded, totalBytes } = chunk;
      const of = totalBytes === undefined ? "" : ` of ${totalBytes}`;
      const notification: ServerNotification = {
        method: "notifications/progress",
        params: {
          progressToken,
          progress: bytesDownloaded,
          ...(totalBytes === undefined ? {} : { total: totalBytes }),
          message: `artifact_download ${candidateId} (job ${jobId}): ${status}, ${bytesDownloaded}${of} bytes`,
        },
      };
      sending = sending.then(() => request.sendNotification(notification)).catch(onError);
    },
    settled: () => sending,
  };
}

function isDownloadProgress(chunk: unknown): chunk is ArtifactDownloadProgressEvent {
  const event = chunk as Partial<ArtifactDownloadProgressEvent> | null;
  return (
    typeof event === "object" &&
    event !== null &&
    event.type === "artifact_download_progress" &&
    typeof event.bytesDownloaded === "number"
  );
}
