/**
 * The built-in `paper_extract_pdf` tool: a LangChain tool over the broker's `paper_extract_pdf` call
 * (`extractDownloadedPaper`), behind the same-turn rule (a download and its extraction cannot share a
 * model turn). Failures are results (`status: "error"` tool messages), never throws.
 */
import { AIMessage } from "@langchain/core/messages";
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
import type { RefusedCall } from "../governance/broker/index.js";
import type { AuthorizationRequest } from "../governance/permissions/index.js";
import type { DownloadJobStore } from "./download-job-store.js";
import {
  askExtraction,
  type BuiltinCallApproval,
  extractDownloadedPaper,
  PAPER_EXTRACT_TOOL_ID,
  type PaperExtractionRequest,
  type PaperExtractionRuntime,
} from "./paper-extraction.js";
import { toolReply } from "./tool-reply.js";

export type { BuiltinCallApproval, PaperExtractResult } from "./paper-extraction.js";
export { PAPER_EXTRACT_TOOL_ID } from "./paper-extraction.js";

/** Resolves the tool-call ids of the model turn (AIMessage) that issued the current call. */
export type TurnToolCallIds = (config: LangGraphRunnableConfig, toolCallId: string) => string[] | undefined;

/** Options of {@link createPaperExtractTool}. */
export interface PaperExtractToolOptions {
  /**
   * Runs the extraction (`governance.broker`): its in-process source holds the bounds and data
   * directory; its `authorizationRequest` is what `approval` asks about.
   */
  broker: PaperExtractionRuntime["broker"] & {
    /** The permission request the broker's permission step would authorize for this call (`Broker.authorizationRequest`). */
    authorizationRequest(call: RefusedCall): Promise<AuthorizationRequest>;
  };
  /**
   * Asked before an extraction the permission policy finds dangerous (a `strict` policy, the app's own
   * rule). @default none: the broker's permission step decides alone (a grant, a recorded decision or
   * the session's mode)
   */
  approval?: BuiltinCallApproval | undefined;
  /**
   * Who a call is for (see `PrincipalResolver`): its rows carry it, and only its grants, approval mode
   * and decisions apply. @default none: the single user
   */
  principal?: ((config: LangGraphRunnableConfig) => string | undefined) | undefined;
  /** Where the download jobs live (`governance.downloads`), read for the same-turn rule only. */
  downloads: { readonly jobs: Pick<DownloadJobStore, "get"> };
  /**
   * The session of a call; a blank or `undefined` answer defers to the thread.
   * @default `configurable.thread_id`, else `"default"` (see `sessionIdOf`)
   */
  sessionId?: (config: LangGraphRunnableConfig) => string | undefined;
  /**
   * The tool-call ids of the calling model turn, for the same-turn rule.
   * @default reads the graph's `messages` channel and finds the AIMessage holding this call
   */
  turnToolCallIds?: TurnToolCallIds;
}

const schema = z.object({
  artifactJobId: z.string().min(1).describe("The jobId of a completed artifact_download of a PDF paper."),
});

/**
 * The `paper_extract_pdf` tool. Refuses unknown, unfinished, failed and non-PDF downloads, another
 * session's download (`PERMISSION_DENIED`, audited), and
 * (retryably) a download started by an `artifact_download` call of the same model turn. Idempotent
 * per job: a repeated call returns the stored extraction without parsing again. Each call the broker
 * runs leaves one ledger row; only a successful one makes the record full text.
 * @param options the broker, the job store and the session and turn resolvers
 * @returns a structured tool named `paper_extract_pdf`
 * @example
 * const tools = [createPaperExtractTool({ broker: governance.broker, downloads: governance.downloads })];
 */
export function createPaperExtractTool(options: PaperExtractToolOptions): StructuredToolInterface {
  const turnIds = options.turnToolCallIds ?? turnToolCallIdsFromState;
  const runtime: PaperExtractionRuntime = { broker: options.broker };
  return tool(
    // Inside a graph the tool's config is LangGraph's (its `writer`, its channels); outside, plain.
    async (input, config: LangGraphRunnableConfig & ToolRunnableConfig) => {
      const toolCallId = config.toolCall?.id;
      const threadId = threadIdOf(config);
      const reply = (content: unknown, ok: boolean) =>
        toolReply(PAPER_EXTRACT_TOOL_ID, toolCallId, content, ok);
      const sessionId = sessionIdOf(config, options.sessionId);
      try {
        const job = await options.downloads.jobs.get(input.artifactJobId);
        // Another session's job is refused by the extraction itself, which tells nothing about it.
        const ownJob = job?.sessionId === sessionId ? job : undefined;
        const sameTurn =
          toolCallId !== undefined && ownJob?.toolCallId !== undefined
            ? turnIds(config, toolCallId)?.includes(ownJob.toolCallId)
            : false;
        if (job && sameTurn) {
          throw new GovernanceError(
            "INVALID_INPUT",
            `Download job ${job.jobId} was started in this same turn; call ${PAPER_EXTRACT_TOOL_ID} in the next turn, after the download's result is in.`,
            { retryable: true, data: { artifactJobId: job.jobId, reason: "same_turn" } },
          );
        }
        const request: PaperExtractionRequest = {
          artifactJobId: input.artifactJobId,
          sessionId,
          ...optional({ principal: principalOf(config, options.principal), threadId, toolCallId }),
        };
        // A dangerous extraction gets the card every call gets, asked about the request the broker
        // authorizes; an invalid or refused call is not asked about: the broker records its refusal.
        await askExtraction(options.broker, options.approval, request);
        const result = await extractDownloadedPaper(runtime, request);
        return reply(result, true);
      } catch (error) {
        if (isGraphBubbleUp(error)) throw error;
        const governed = toGovernanceError(error, { unrecognized: "NORMALIZATION_FAILED" });
        return reply({ ...toErrorBody(governed), artifactJobId: input.artifactJobId }, false);
      }
    },
    {
      name: PAPER_EXTRACT_TOOL_ID,
      description:
        "Extract the text of a completed artifact_download PDF (by its jobId) with bounds on pages, bytes, " +
        "characters and time. Returns the path of fulltext.md (a '## Page N' section per page), of " +
        "manifest.json, the page count and warnings. Call it in a turn after the download finished.",
      schema,
    },
  );
}

/**
 * The default turn resolver: inside a LangGraph task the config can read the graph's channels (the
 * same read `ChannelRead` uses); the messages hold the AIMessage of the current turn, because a
 * step's tool messages are written only after every task of the step finished.
 */
const turnToolCallIdsFromState: TurnToolCallIds = (config, toolCallId) => {
  // LangGraph's internal channel reader, `(channel, fresh) => value`: checked, not assumed.
  const read: unknown = config.configurable?.__pregel_read;
  if (typeof read !== "function") return undefined;
  let messages: unknown;
  try {
    messages = read("messages", false);
  } catch {
    return undefined; // a graph without a messages channel: the rule cannot apply
  }
  if (!Array.isArray(messages)) return undefined;
  for (const message of [...messages].reverse()) {
    if (!AIMessage.isInstance(message)) continue;
    const ids = (message.tool_calls ?? []).map((call) => call.id).filter((id) => id !== undefined);
    if (ids.includes(toolCallId)) return ids;
  }
  return undefined;
};
