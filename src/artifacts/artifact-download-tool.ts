/**
 * The built-in `artifact_download` tool: a LangChain tool over `DownloadManager`
 * that asks for approval (an approval card, before any side effect), streams progress through
 * LangGraph's custom stream (`config.writer`) and answers with the terminal job result. Failures are
 * results (`status: "error"` tool messages), never throws; LangGraph interrupts propagate.
 */
import { type StructuredToolInterface, type ToolRunnableConfig, tool } from "@langchain/core/tools";
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { toGovernanceError } from "../contract/index.js";
import {
  GovernanceError,
  optional,
  principalOf,
  sessionIdOf,
  threadIdOf,
  toErrorBody,
} from "../core/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID } from "../governance/permissions/index.js";
import type { DownloadManager } from "./download-manager.js";
import type { DownloadApproval, DownloadProgress, DownloadRequest } from "./download-types.js";
import { requestDownloadApproval } from "./request-download-approval.js";
import { toolReply } from "./tool-reply.js";

/** Options of {@link createArtifactDownloadTool}. */
export interface ArtifactDownloadToolOptions {
  /** The manager that checks and runs the downloads (its `authorize` hook checks permission). */
  downloads: Pick<DownloadManager, "download" | "prepare" | "hasCall">;
  /**
   * Shows the approval card of a dangerous download inside the call's task (LangGraph `interrupt()`)
   * and records the answer before the download starts. `createGovernedAgent` passes one when the
   * runtime enforces permissions. @default none: the manager's `authorize` decides alone (without a
   * recorded decision, grant or `always_allow`, a dangerous download is refused with "approval required")
   */
  approval?: DownloadApproval;
  /**
   * The session of a call; a blank or `undefined` answer defers to the thread.
   * @default `configurable.thread_id`, else `"default"` (see `sessionIdOf`)
   */
  sessionId?: (config: LangGraphRunnableConfig) => string | undefined;
  /**
   * Who a call is for (see `PrincipalResolver`): only its grants, approval mode and decisions apply,
   * and its rows carry it. @default none: the single user
   */
  principal?: ((config: LangGraphRunnableConfig) => string | undefined) | undefined;
  /**
   * Cancels the download job when the call's `config.signal` aborts (the gateway: a client's
   * `notifications/cancelled`); the job ends `cancelled` with its ledger row.
   * @default false: in a graph, a run's abort (a failing sibling task too) leaves the job running, so
   *   that the resumed call replays the finished download instead of a cancelled one
   */
  cancelOnAbort?: boolean | undefined;
}

/** The custom-stream event written for each progress step. */
export interface ArtifactDownloadProgressEvent extends DownloadProgress {
  type: "artifact_download_progress";
}

const schema = z.object({
  mcpInvocationId: z
    .string()
    .min(1)
    .describe("The mcpInvocationId of the successful call that returned the candidate."),
  candidateId: z.string().min(1).describe("The candidateId of one artifact candidate of that call."),
  destinationPath: z
    .string()
    .optional()
    .describe("A path relative to the workspace; defaults to downloads/<source>/<file>. Never overwrites."),
});

/**
 * The `artifact_download` tool. With `approval`, a dangerous download first shows its approval card
 * (one per call; a denial answers `PERMISSION_DENIED` with the human's message and starts nothing).
 * A re-run of a call that already ran returns its recorded outcome without asking or downloading
 * again. It returns only when the job is completed, failed or cancelled.
 * @param options the download manager, the optional approval hook and session resolver
 * @returns a structured tool named `artifact_download`
 * @example
 * const tools = [createArtifactDownloadTool({ downloads: governance.downloads }), ...governedTools];
 */
export function createArtifactDownloadTool(options: ArtifactDownloadToolOptions): StructuredToolInterface {
  return tool(
    // Inside a graph the tool's config is LangGraph's (its `writer`, its channels); outside, plain.
    async (input, config: LangGraphRunnableConfig & ToolRunnableConfig) => {
      const toolCallId = config.toolCall?.id;
      const threadId = threadIdOf(config);
      const reply = (content: unknown, ok: boolean) =>
        toolReply(ARTIFACT_DOWNLOAD_TOOL_ID, toolCallId, content, ok);
      try {
        const request: DownloadRequest = {
          mcpInvocationId: input.mcpInvocationId,
          candidateId: input.candidateId,
          ...(input.destinationPath?.trim() ? { destinationPath: input.destinationPath } : {}),
          sessionId: sessionIdOf(config, options.sessionId),
          ...optional({ principal: principalOf(config, options.principal) }),
          ...(threadId === undefined ? {} : { threadId }),
          ...(toolCallId === undefined ? {} : { toolCallId }),
          onProgress: (progress) =>
            config.writer?.({
              type: "artifact_download_progress",
              ...progress,
            } satisfies ArtifactDownloadProgressEvent),
          signal: options.cancelOnAbort ? config.signal : undefined,
        };
        const denied = await approve(options, request);
        if (denied) return reply(toErrorBody(denied), false);
        const result = await options.downloads.download(request);
        return reply(result, result.status === "completed");
      } catch (error) {
        if (isGraphBubbleUp(error)) throw error;
        return reply(toErrorBody(toGovernanceError(error)), false);
      }
    },
    {
      name: ARTIFACT_DOWNLOAD_TOOL_ID,
      description:
        "Download one artifact candidate that an earlier successful tool call returned (by its mcpInvocationId " +
        "and candidateId) into the workspace. Runs until the download is completed, failed or cancelled and " +
        "returns the job id, final path and sha256. Needs the user's permission.",
      schema,
    },
  );
}

/** Asks for approval before any side effect (see `requestDownloadApproval`). */
async function approve(
  options: ArtifactDownloadToolOptions,
  request: DownloadRequest,
): Promise<GovernanceError | undefined> {
  const reason = await requestDownloadApproval(options.downloads, options.approval, request);
  if (reason === undefined) return undefined;
  const { toolCallId } = request;
  return new GovernanceError(
    "PERMISSION_DENIED",
    `Call to ${ARTIFACT_DOWNLOAD_TOOL_ID} was not approved: ${reason}. Nothing was executed.`,
    { data: { name: ARTIFACT_DOWNLOAD_TOOL_ID, ...(toolCallId === undefined ? {} : { toolCallId }) } },
  );
}
