/**
 * `createPaperAcquisitionGraph`: a subgraph an app calls directly,
 * without a model, to turn artifact candidates into extracted papers. START sends one download task
 * per candidate (each shows its own approval card before any side effect, then downloads: every
 * download of the run in one step, concurrently); each completed PDF sends one extraction task into
 * the next step; `collect` lists the outcomes once every extraction is in.
 */

import { type BaseCheckpointSaver, END, Send, START, StateGraph } from "@langchain/langgraph";
import { requireGovernanceOption } from "../core/index.js";
import type { ApprovalCardFormat, PrincipalResolver, SessionIdResolver } from "../nodes/index.js";
import { createBuiltinApproval } from "./artifact-builtins.js";
import {
  type AcquisitionDownloadTask,
  createAcquisitionDownloadNode,
  type PaperAcquisitionRuntime,
} from "./paper-acquisition-download.js";
import { collectAcquisition, createAcquisitionExtractNode } from "./paper-acquisition-extract.js";
import {
  acquisitionCallId,
  PaperAcquisitionInputAnnotation,
  PaperAcquisitionOutputAnnotation,
  type PaperAcquisitionState,
  PaperAcquisitionStateAnnotation,
  readCandidate,
} from "./paper-acquisition-state.js";

export type { PaperAcquisitionRuntime } from "./paper-acquisition-download.js";

/** The node names of the graph. */
const DOWNLOAD = "download";
const EXTRACT = "extract";
const COLLECT = "collect";

/** Options of {@link createPaperAcquisitionGraph}. */
export interface PaperAcquisitionGraphOptions {
  /** The runtime (`createGovernance`): downloads, data directory, and the catalog, ledger and permissions whose enforcement turns on the approval cards. */
  governance: PaperAcquisitionRuntime;
  /**
   * Needed for approval cards when the graph runs on its own. Without one (and outside a parent
   * graph that has one) a dangerous download is denied with the approval gate's "cannot pause"
   * message. @default none (a parent graph's checkpointer is inherited)
   */
  checkpointer?: BaseCheckpointSaver;
  /** The governance session of a run. @default `configurable.thread_id`, else `"default"` (see `SessionIdResolver`) */
  sessionId?: SessionIdResolver;
  /**
   * Who a run is for (see `PrincipalResolver`): its downloads' and extractions' cards, grants and rows
   * are that principal's. @default none: the single user
   */
  principal?: PrincipalResolver | undefined;
  /**
   * The shape of the download approval cards: `hitl` (langchain's `HITLRequest`, the native card under
   * `sciencegate`) or `native` (`PermissionCard`); both accept either answer shape. @default "hitl"
   */
  cardFormat?: ApprovalCardFormat;
  /** The compiled graph's name (its node name in traces). @default "paper_acquisition" */
  name?: string;
}

/**
 * Builds and compiles the paper acquisition graph. Input `{candidates: [{mcpInvocationId,
 * candidateId, destinationPath?}]}`; output `{papers, warnings}`, one paper per input candidate in
 * input order with `status` `extracted | downloaded | denied | failed`, the job id, final path,
 * checksum, text and manifest paths, page count, warnings and error. Denials and failures are
 * results; only the approval interrupt is thrown. A dangerous download pauses the run with one
 * approval card per candidate (independent interrupt ids; answer several with one resume map).
 * Each candidate's download is keyed by `thread_id` and a call id derived from the candidate, so a
 * resume, or the same candidate again in the thread, replays its outcome instead of downloading twice.
 * Download progress goes to the custom stream as `artifact_download_progress` events.
 * @param options `governance` (the runtime (`createGovernance`): downloads, data directory, and the catalog, ledger and permissions whose enforcement turns on the approval cards), checkpointer, session resolver, card format and name
 * @returns the compiled graph: `invoke` it, or add it as a node of the app's own graph
 * @example
 * const acquire = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
 * const paused = await acquire.invoke({ candidates: [{ mcpInvocationId, candidateId }] }, config);
 * const answers = Object.fromEntries(paused.__interrupt__.map((i) => [i.id, { decision: "allow_once" }]));
 * const { papers } = await acquire.invoke(new Command({ resume: answers }), config);
 */
export function createPaperAcquisitionGraph(options: PaperAcquisitionGraphOptions) {
  requireGovernanceOption(options, "createPaperAcquisitionGraph");
  const { governance } = options;
  const extraction = { broker: governance.broker };
  // One approval core per graph, as for the downloads.
  const extractionApproval = createBuiltinApproval(governance, { cardFormat: options.cardFormat });
  const download = createAcquisitionDownloadNode({
    runtime: governance,
    sessionId: options.sessionId,
    principal: options.principal,
    cardFormat: options.cardFormat,
    extractNode: EXTRACT,
    collectNode: COLLECT,
  });
  return (
    new StateGraph({
      stateSchema: PaperAcquisitionStateAnnotation,
      input: PaperAcquisitionInputAnnotation,
      output: PaperAcquisitionOutputAnnotation,
    })
      .addNode(DOWNLOAD, download, { ends: [EXTRACT, COLLECT] })
      .addNode(
        EXTRACT,
        createAcquisitionExtractNode(extraction, { ...options, approval: extractionApproval }),
      )
      // Not `defer: true`: LangGraph.js 1.7 releases a deferred node while Send tasks are still
      // pending. A run mixing extracted and unextracted papers reaches collect from both steps (the
      // download tasks' goto, then the extractions); it waits for the extractions itself.
      .addNode(COLLECT, collectAcquisition)
      .addConditionalEdges(START, routeCandidates, [DOWNLOAD, COLLECT])
      .addEdge(EXTRACT, COLLECT)
      .addEdge(COLLECT, END)
      .compile({
        name: options.name ?? "paper_acquisition",
        ...(options.checkpointer ? { checkpointer: options.checkpointer } : {}),
      })
  );
}

/** The compiled graph `createPaperAcquisitionGraph` returns. */
export type PaperAcquisitionGraph = ReturnType<typeof createPaperAcquisitionGraph>;

/** One download task per distinct valid candidate (twins share a task); none goes straight to collect. */
function routeCandidates(state: PaperAcquisitionState): Send[] | typeof COLLECT {
  const tasks = new Map<string, AcquisitionDownloadTask>();
  for (const value of Array.isArray(state.candidates) ? state.candidates : []) {
    const candidate = readCandidate(value);
    if ("invalid" in candidate) continue;
    const callId = acquisitionCallId(candidate);
    if (!tasks.has(callId)) tasks.set(callId, { callId, candidate });
  }
  if (tasks.size === 0) return COLLECT;
  return [...tasks.values()].map((task) => new Send(DOWNLOAD, task));
}
