/**
 * The extraction and collection steps of the paper acquisition graph: one extraction task per
 * completed PDF download (the step after the downloads), then `collect`, which lists every input
 * candidate's outcome in input order.
 */
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  askExtraction,
  type BuiltinCallApproval,
  extractDownloadedPaper,
  type PaperExtractionRequest,
  type PaperExtractToolOptions,
} from "../artifacts/index.js";
import { toGovernanceError } from "../contract/index.js";
import { optional, principalOf, sessionIdOf, threadIdOf } from "../core/index.js";
import type { PrincipalResolver, SessionIdResolver } from "../nodes/index.js";
import type { AcquisitionExtractTask } from "./paper-acquisition-download.js";
import {
  type AcquiredPaper,
  acquisitionCallId,
  type PaperAcquisitionState,
  type PaperAcquisitionUpdate,
  readCandidate,
} from "./paper-acquisition-state.js";

/**
 * Creates the extraction node. A failed extraction leaves the paper `downloaded` with the error and
 * a warning (the file is still there); it never throws.
 * @param runtime jobs, ledger, CAS, data directory, limits and clock of the extraction
 * @param options the app's session and principal resolvers, and the extraction's approval card (when
 *   the runtime enforces permissions)
 * @returns a node taking an {@link AcquisitionExtractTask}
 */
export function createAcquisitionExtractNode(
  runtime: Pick<PaperExtractToolOptions, "broker">,
  options: {
    sessionId?: SessionIdResolver | undefined;
    principal?: PrincipalResolver | undefined;
    approval?: BuiltinCallApproval | undefined;
  },
) {
  return async (
    task: AcquisitionExtractTask,
    config: LangGraphRunnableConfig,
  ): Promise<PaperAcquisitionUpdate> => {
    const { paper, callId } = task;
    const threadId = threadIdOf(config);
    let extracted: AcquiredPaper;
    try {
      const request: PaperExtractionRequest = {
        artifactJobId: paper.jobId ?? "",
        sessionId: sessionIdOf(config, options.sessionId),
        ...optional({ principal: principalOf(config, options.principal), threadId }),
        // Its own ledger key: the download row already holds the candidate's call id.
        toolCallId: `${callId}:extract`,
      };
      // A dangerous extraction (a strict policy, the app's rule) shows the card every call shows.
      await askExtraction(runtime.broker, options.approval, request);
      const result = await extractDownloadedPaper(runtime, request);
      extracted = {
        ...paper,
        status: "extracted",
        textPath: result.textPath,
        manifestPath: result.manifestPath,
        pageCount: result.pageCount,
        warnings: [...paper.warnings, ...result.warnings],
      };
    } catch (error) {
      if (isGraphBubbleUp(error)) throw error;
      const governed = toGovernanceError(error, { unrecognized: "NORMALIZATION_FAILED" });
      extracted = {
        ...paper,
        warnings: [...paper.warnings, `Downloaded but not extracted: ${governed.message}`],
        error: { code: governed.code, message: governed.message, retryable: governed.retryable },
      };
    }
    return { extracted: { [callId]: extracted } };
  };
}

/**
 * The last step: each input candidate's outcome (a duplicate shares its twin's), in input order,
 * plus run-level warnings; it empties the step channels for the thread's next run. It is reached
 * from both steps (a run may have no extraction), so when it runs beside the extractions it only
 * waits: it writes nothing until every sent extraction has written its outcome.
 * @param state the graph state after the downloads (and the extractions)
 * @returns `papers`, `warnings` and the channel resets; nothing while extractions are pending
 */
export function collectAcquisition(state: PaperAcquisitionState): PaperAcquisitionUpdate {
  const downloaded = state.downloaded ?? {};
  const extracted = state.extracted ?? {};
  const pending = Object.entries(downloaded).some(([key, outcome]) => outcome.extracting && !extracted[key]);
  if (pending) return {};
  const input: unknown[] = Array.isArray(state.candidates) ? state.candidates : [];
  const warnings: string[] = [];
  if (!Array.isArray(state.candidates)) warnings.push("No candidates given: `candidates` must be an array.");
  const papers = input.map((value, index): AcquiredPaper => {
    const candidate = readCandidate(value);
    if ("invalid" in candidate) {
      const message = `Candidate ${index} is invalid: ${candidate.invalid}.`;
      warnings.push(message);
      return { ...identityOf(value), status: "failed", warnings: [], error: invalidInput(message) };
    }
    const key = acquisitionCallId(candidate);
    const outcome = extracted[key] ?? downloaded[key]?.paper;
    const paper: AcquiredPaper = outcome
      ? { ...outcome, ...identityOf(candidate) }
      : { ...identityOf(candidate), status: "failed", warnings: [], error: notRun() };
    for (const warning of paper.warnings) warnings.push(`${paper.candidateId}: ${warning}`);
    if (paper.status === "denied" || paper.status === "failed") {
      warnings.push(`${paper.candidateId}: ${paper.status} (${paper.error?.code}): ${paper.error?.message}`);
    }
    return paper;
  });
  return { papers, warnings, downloaded: null, extracted: null };
}

function identityOf(value: unknown): Pick<AcquiredPaper, "mcpInvocationId" | "candidateId"> {
  const fields = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const text = (field: unknown) => (typeof field === "string" ? field : "");
  return { mcpInvocationId: text(fields.mcpInvocationId), candidateId: text(fields.candidateId) };
}

function invalidInput(message: string): NonNullable<AcquiredPaper["error"]> {
  return { code: "INVALID_INPUT", message, retryable: false };
}

function notRun(): NonNullable<AcquiredPaper["error"]> {
  return {
    code: "UPSTREAM_UNAVAILABLE",
    message: "The candidate's download task left no outcome.",
    retryable: true,
  };
}
