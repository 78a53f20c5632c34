/**
 * The download step of the paper acquisition graph: one task per candidate that shows its approval
 * card (LangGraph `interrupt()`) before any side effect, then runs the governed download under a
 * stable call id and, for a completed PDF, sends the extraction task of the next step (else goes on
 * to collect).
 */

import { Command, isGraphBubbleUp, type LangGraphRunnableConfig, Send } from "@langchain/langgraph";
import type {
  ArtifactDownloadProgressEvent,
  ArtifactDownloadToolOptions,
  BuiltinCallApproval,
  DownloadManager,
  DownloadRequest,
  DownloadResult,
  PaperExtractToolOptions,
} from "../artifacts/index.js";
import { askDownload, downloadArtifact, hasPdfSignature } from "../artifacts/index.js";
import { toGovernanceError } from "../contract/index.js";
import { type GovernanceError, optional, principalOf, sessionIdOf, threadIdOf } from "../core/index.js";
import type { LedgerReader } from "../governance/audit/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import type { PermissionService } from "../governance/permissions/index.js";
import type { ApprovalCardFormat, PrincipalResolver, SessionIdResolver } from "../nodes/index.js";
import { createBuiltinApproval } from "./artifact-builtins.js";
import type {
  AcquiredPaper,
  PaperAcquisitionCandidate,
  PaperAcquisitionUpdate,
} from "./paper-acquisition-state.js";

/** What the graph needs of a governance runtime; a `createGovernance` runtime has all of it. */
export interface PaperAcquisitionRuntime {
  /** The download jobs. */
  downloads: Pick<DownloadManager, "jobs" | "ledgerWriter" | "store">;
  /**
   * Runs the downloads and extractions (`artifact_download` and `paper_extract_pdf` of the runtime's
   * in-process source, its bounds and data directory).
   */
  broker: PaperExtractToolOptions["broker"] & ArtifactDownloadToolOptions["broker"];
  /** With `ledger`, `permissions` and `permissionsEnforced: true`, dangerous downloads show a card. */
  catalog?: SourceCatalog;
  ledger?: LedgerReader;
  permissions?: PermissionService;
  permissionsEnforced?: boolean;
}

/** The input of one download task. */
export interface AcquisitionDownloadTask {
  callId: string;
  candidate: PaperAcquisitionCandidate;
}

/** The input of one extraction task: the downloaded paper. */
export interface AcquisitionExtractTask {
  callId: string;
  paper: AcquiredPaper;
}

/** What the download node needs. */
export interface AcquisitionDownloadDeps {
  runtime: PaperAcquisitionRuntime;
  sessionId: SessionIdResolver | undefined;
  /** Who a run is for. */
  principal?: PrincipalResolver | undefined;
  /** The shape of the approval cards. */
  cardFormat: ApprovalCardFormat | undefined;
  /** The node that extracts a completed PDF. */
  extractNode: string;
  /** The node that lists the outcomes. */
  collectNode: string;
}

/**
 * Creates the download node. Failures are results (a `denied` or `failed` paper); only LangGraph
 * control flow (the approval interrupt) is thrown.
 * @param deps the runtime, session resolver and the names of the extraction and collect nodes
 * @returns a node taking an {@link AcquisitionDownloadTask} (sent by the graph's router)
 */
export function createAcquisitionDownloadNode(deps: AcquisitionDownloadDeps) {
  const { runtime } = deps;
  // One approval core per graph: sibling tasks of a resume share it, so allow_matching releases them.
  const approval = createBuiltinApproval(runtime, { cardFormat: deps.cardFormat });
  return async (
    task: AcquisitionDownloadTask,
    config: LangGraphRunnableConfig,
  ): Promise<Command<unknown, PaperAcquisitionUpdate>> => {
    const paper = await acquire(runtime, approval, task, config, deps);
    const isPdf =
      paper.status === "downloaded" &&
      paper.finalPath !== undefined &&
      (await hasPdfSignature(paper.finalPath));
    if (paper.status === "downloaded" && !isPdf) {
      paper.warnings.push("Not a PDF (no %PDF- signature): downloaded, not extracted.");
    }
    const extractTask: AcquisitionExtractTask = { callId: task.callId, paper };
    return new Command({
      update: { downloaded: { [task.callId]: { paper, extracting: isPdf } } },
      // Without an extraction, this task's outcome is final: straight on to collect.
      goto: isPdf ? [new Send(deps.extractNode, extractTask)] : [deps.collectNode],
    });
  };
}

/** Approval, then the download; the paper is `downloaded` (not yet extracted), `denied` or `failed`. */
async function acquire(
  runtime: PaperAcquisitionRuntime,
  approval: BuiltinCallApproval | undefined,
  task: AcquisitionDownloadTask,
  config: LangGraphRunnableConfig,
  resolvers: Pick<AcquisitionDownloadDeps, "sessionId" | "principal">,
): Promise<AcquiredPaper> {
  const { candidate, callId } = task;
  const threadId = threadIdOf(config);
  const request: DownloadRequest = {
    mcpInvocationId: candidate.mcpInvocationId,
    candidateId: candidate.candidateId,
    ...(candidate.destinationPath === undefined ? {} : { destinationPath: candidate.destinationPath }),
    sessionId: sessionIdOf(config, resolvers.sessionId),
    ...optional({ principal: principalOf(config, resolvers.principal), threadId }),
    toolCallId: callId,
    onProgress: (progress) =>
      config.writer?.({
        type: "artifact_download_progress",
        ...progress,
      } satisfies ArtifactDownloadProgressEvent),
  };
  const base = { mcpInvocationId: candidate.mcpInvocationId, candidateId: candidate.candidateId };
  try {
    // The same card as `artifact_download`'s; the broker's permission step consumes the answer.
    await askDownload(runtime.broker, approval, request);
    return fromResult(base, await downloadArtifact({ governance: runtime, ...request }));
  } catch (error) {
    if (isGraphBubbleUp(error)) throw error;
    const governed = toGovernanceError(error);
    const status = governed.code === "PERMISSION_DENIED" ? "denied" : "failed";
    return { ...base, status, warnings: [], error: errorOf(governed) };
  }
}

function fromResult(base: Pick<AcquiredPaper, "mcpInvocationId" | "candidateId">, result: DownloadResult) {
  const paper: AcquiredPaper = {
    ...base,
    status: result.status === "completed" ? "downloaded" : "failed",
    jobId: result.jobId,
    finalPath: result.finalPath,
    ...(result.actualChecksum === undefined ? {} : { actualChecksum: result.actualChecksum }),
    warnings: [...result.warnings],
  };
  if (result.status !== "completed") {
    paper.error = result.error ?? {
      code: result.status === "cancelled" ? "CANCELLED" : "UPSTREAM_UNAVAILABLE",
      message: `The download ended ${result.status}.`,
      retryable: true,
    };
  }
  return paper;
}

function errorOf(error: GovernanceError): NonNullable<AcquiredPaper["error"]> {
  return { code: error.code, message: error.message, retryable: error.retryable };
}
