/**
 * The built-in `paper_extract_pdf` tool (DESIGN.md §7): bounded extraction of a completed PDF download
 * into `<dataDir>/papers/<jobId>/`. It only reads download jobs, so a failed extraction never changes
 * the download's state. Failures are results (`status: "error"` tool messages), never throws.
 */
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import type { Clock } from "../governance/clock.js";
import { GovernanceError, isGovernanceError, toErrorBody } from "../governance/errors.js";
import type { DownloadJob, DownloadJobStore } from "./download-job-store.js";
import { extractPdf } from "./extract-pdf.js";
import type { PdfLimits } from "./pdf-limits.js";

/** The model-visible name of the tool. */
export const PAPER_EXTRACT_TOOL_ID = "paper_extract_pdf";

/** Resolves the tool-call ids of the model turn (AIMessage) that issued the current call. */
export type TurnToolCallIds = (config: LangGraphRunnableConfig, toolCallId: string) => string[] | undefined;

/** Options of {@link createPaperExtractTool}. */
export interface PaperExtractToolOptions {
  /** Where the download jobs live (`governance.downloads`); only read, never written. */
  downloads: { readonly jobs: Pick<DownloadJobStore, "get"> };
  /** The data directory; extractions go to `<dataDir>/papers/<jobId>/`. */
  dataDir: string;
  /** Extraction bounds. @default 50 MiB, 200 pages, 20 M characters, 120 s */
  limits?: Partial<PdfLimits>;
  /** Times the wall-clock bound. @default systemClock */
  clock?: Clock;
  /**
   * The tool-call ids of the calling model turn, for the same-turn rule.
   * @default reads the graph's `messages` channel and finds the AIMessage holding this call
   */
  turnToolCallIds?: TurnToolCallIds;
}

/** What a successful call returns (JSON in the tool message). */
export interface PaperExtractResult {
  artifactJobId: string;
  extractionJobId: string;
  textPath: string;
  manifestPath: string;
  pageCount: number;
  warnings: string[];
}

const schema = z.object({
  artifactJobId: z.string().min(1).describe("The jobId of a completed artifact_download of a PDF paper."),
});

/**
 * The `paper_extract_pdf` tool. Refuses unknown, unfinished, failed and non-PDF downloads, and
 * (retryably) a download started by an `artifact_download` call of the same model turn. Idempotent
 * per job: a repeated call returns the stored extraction without parsing again.
 * @param options the job store, data directory, limits, clock and turn resolver
 * @returns a structured tool named `paper_extract_pdf`
 * @example
 * const tools = [createPaperExtractTool({ downloads: governance.downloads, dataDir: ".sciencegate" })];
 */
export function createPaperExtractTool(options: PaperExtractToolOptions): StructuredToolInterface {
  const inFlight = new Map<string, Promise<PaperExtractResult>>();
  const turnIds = options.turnToolCallIds ?? turnToolCallIdsFromState;
  const extract = (job: DownloadJob): Promise<PaperExtractResult> => {
    // One extraction per job at a time; a concurrent twin shares it (results are files, so later calls re-read).
    const running = inFlight.get(job.jobId);
    if (running) return running;
    const outDir = join(options.dataDir, "papers", job.jobId);
    const work = extractPdf(
      { pdfPath: job.finalPath, outDir, id: job.jobId },
      options.limits ?? {},
      options.clock ? { clock: options.clock } : {},
    )
      .then((r) => ({
        artifactJobId: job.jobId,
        extractionJobId: `extract-${job.jobId}`,
        textPath: r.textPath,
        manifestPath: r.manifestPath,
        pageCount: r.pageCount,
        warnings: r.warnings,
      }))
      .finally(() => inFlight.delete(job.jobId));
    inFlight.set(job.jobId, work);
    return work;
  };
  return tool(
    async (input, runConfig) => {
      const config = runConfig as LangGraphRunnableConfig & { toolCall?: { id?: string } };
      const toolCallId = config.toolCall?.id;
      const reply = (content: unknown, ok: boolean) =>
        toolCallId === undefined
          ? JSON.stringify(content)
          : new ToolMessage({
              content: JSON.stringify(content),
              tool_call_id: toolCallId,
              name: PAPER_EXTRACT_TOOL_ID,
              status: ok ? "success" : "error",
            });
      try {
        const job = await options.downloads.jobs.get(input.artifactJobId);
        if (!job) {
          throw new GovernanceError("UNKNOWN_ID", `No download job '${input.artifactJobId}'.`, {
            data: { artifactJobId: input.artifactJobId },
          });
        }
        const sameTurn =
          toolCallId !== undefined && job.toolCallId !== undefined
            ? turnIds(config, toolCallId)?.includes(job.toolCallId)
            : false;
        if (sameTurn) {
          throw new GovernanceError(
            "INVALID_INPUT",
            `Download job ${job.jobId} was started in this same turn; call ${PAPER_EXTRACT_TOOL_ID} in the next turn, after the download's result is in.`,
            { retryable: true, data: { artifactJobId: job.jobId, reason: "same_turn" } },
          );
        }
        checkJob(job);
        return reply(await extract(job), true);
      } catch (error) {
        if (isGraphBubbleUp(error)) throw error;
        const governed = isGovernanceError(error)
          ? error
          : new GovernanceError("NORMALIZATION_FAILED", String(error), { cause: error });
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

/** Only a completed download is extracted; a running one is worth retrying later. */
function checkJob(job: DownloadJob): void {
  if (job.status === "completed") return;
  const finished = job.status === "failed" || job.status === "cancelled";
  throw new GovernanceError(
    "INVALID_INPUT",
    finished
      ? `Download job ${job.jobId} is ${job.status}; only a completed download can be extracted.`
      : `Download job ${job.jobId} is still ${job.status}; call ${PAPER_EXTRACT_TOOL_ID} again in a later turn.`,
    { retryable: !finished, data: { artifactJobId: job.jobId, status: job.status } },
  );
}

/**
 * The default turn resolver: inside a LangGraph task the config can read the graph's channels (the
 * same read `ChannelRead` uses); the messages hold the AIMessage of the current turn, because a
 * step's tool messages are written only after every task of the step finished.
 */
const turnToolCallIdsFromState: TurnToolCallIds = (config, toolCallId) => {
  const read = config.configurable?.__pregel_read as
    | ((channel: string, fresh: boolean) => unknown)
    | undefined;
  if (typeof read !== "function") return undefined;
  let messages: unknown;
  try {
    messages = read("messages", false);
  } catch {
    return undefined; // a graph without a messages channel: the rule cannot apply
  }
  if (!Array.isArray(messages)) return undefined;
  for (const message of [...(messages as BaseMessage[])].reverse()) {
    if (!AIMessage.isInstance(message)) continue;
    const ids = (message.tool_calls ?? []).map((call) => call.id).filter((id) => id !== undefined);
    if (ids.includes(toolCallId)) return ids;
  }
  return undefined;
};
