/**
 * The built-in `artifact_download`, a tool of the built-ins' in-process source (`artifact-source.ts`):
 * the broker calls it like any tool (one replay rule, permission step, card kind and row; see
 * ARCHITECTURE.md, "The one call path"). Before the permission step it plans the download (the
 * candidate, its source hosts, licence and destination) and the plan's facts are what the permission
 * step renders and the card shows (grants are keyed `artifact:<source>`). Once authorized it runs the
 * job, streaming its progress as `artifact_download_progress` events. The LangChain tool answers with
 * the terminal job; failures are results (`status: "error"` tool messages), never throws.
 */
import { basename } from "node:path";
import { type StructuredToolInterface, type ToolRunnableConfig, tool } from "@langchain/core/tools";
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { toGovernanceError } from "../contract/index.js";
import {
  isGovernanceError,
  optional,
  principalOf,
  requireGovernanceOption,
  sessionIdOf,
  threadIdOf,
  toErrorBody,
} from "../core/index.js";
import type {
  InProcessCall,
  InvokeOutcome,
  InvokeRequest,
  PreparedCall,
  RefusedCall,
} from "../governance/broker/index.js";
import type { ToolManifest } from "../governance/manifests/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID, type AuthorizationRequest } from "../governance/permissions/index.js";
import { downloadResultOf } from "./download-call-result.js";
import type { ManifestLookup } from "./download-candidate.js";
import { type DownloadJobStore, TERMINAL_DOWNLOAD_STATES } from "./download-job-store.js";
import { callJobId, type DownloadManager } from "./download-manager.js";
import { jobResult } from "./download-run.js";
import type { DownloadPlan, DownloadProgress, DownloadRequest, DownloadResult } from "./download-types.js";
import type { BuiltinCallApproval } from "./paper-extraction.js";
import { toolReply } from "./tool-reply.js";

/** The `sourceId` of the built-ins' calls (`ARTIFACT_SOURCE_ID`), spelt here to keep imports one-way. */
const BUILTIN_SOURCE_ID = "sciencegate";

/** The custom-stream event written for each progress step. */
export interface ArtifactDownloadProgressEvent extends DownloadProgress {
  type: "artifact_download_progress";
}

/**
 * The manifest of `artifact_download`. The resource's first two `:` segments (`artifact:<source>`, the
 * candidate's source) are what an `allow_matching` grant covers; the summary uses placeholders only, so
 * every untrusted value (file name, host) is sanitized and bounded by the renderer.
 */
export const ARTIFACT_DOWNLOAD_TOOL: ToolManifest = {
  id: ARTIFACT_DOWNLOAD_TOOL_ID,
  description:
    "Download one artifact candidate of an earlier successful call into the workspace (built-in, governed).",
  // No kind fits a built-in that writes files; `analysis` keeps it out of the candidate-listing kind.
  kind: "analysis",
  mcpToolName: ARTIFACT_DOWNLOAD_TOOL_ID,
  inputSchema: {
    type: "object",
    properties: {
      mcpInvocationId: { type: "string", minLength: 1 },
      candidateId: { type: "string", minLength: 1 },
      destinationPath: { type: "string" },
    },
    required: ["mcpInvocationId", "candidateId"],
  },
  readOnly: false,
  permission: {
    action: "download",
    resourceTemplate: "artifact:{sourceId}:{sourceRecordId}:{destinationPath}",
    summaryTemplate:
      'Download "{fileName}" from {sourceTitle} ({sourceId} record {sourceRecordId}, host {urlHost}) ' +
      "to {destinationPath} in the workspace",
  },
  retryPolicy: {},
  // The job keeps its own deadlines (`DownloadManagerOptions.jobTimeoutMs`).
  timeoutMs: 600_000,
  routing: { keywords: [], mode: "off", priority: 0 },
  promptFragment: "",
};

/**
 * Prepares one `artifact_download` call for the broker: plans it (or, for a call whose job a crashed
 * process left, plans that job again) with no side effect.
 * @param downloads the manager that plans and runs the job
 * @param catalog the candidates' source manifests (the card names the source)
 * @param call the validated call
 * @returns the prepared call: the plan's facts as its subject, its licence, and the job's run
 * @throws GovernanceError the plan's refusals (see `DownloadManager.prepare`)
 */
export async function prepareDownloadCall(
  downloads: Pick<DownloadManager, "prepare" | "result">,
  catalog: ManifestLookup,
  call: InProcessCall,
): Promise<PreparedCall> {
  const { mcpInvocationId, candidateId, destinationPath } = call.input as {
    mcpInvocationId: string;
    candidateId: string;
    destinationPath?: string;
  };
  const prepared = await downloads.prepare({
    mcpInvocationId,
    candidateId,
    // A blank destination is absent: the default one applies.
    ...(destinationPath?.trim() ? { destinationPath } : {}),
    sessionId: call.session,
    ...optional({ principal: call.principal, threadId: call.threadId, toolCallId: call.toolCallId }),
  });
  if (prepared.keyTaken) return { keyTaken: true, run: () => Promise.reject(new Error("key taken")) };
  const { plan } = prepared;
  const sourceTitle =
    catalog.source(plan.candidate.sourceId)?.manifest.displayName ?? plan.candidate.sourceId;
  return {
    subject: downloadSubject(plan, sourceTitle),
    license: plan.license,
    // A job exists only once its call was authorized: the same call continuing it is not asked again.
    authorized: prepared.continues,
    async run({ signal, emit, tally, invocationId }) {
      const onProgress =
        emit &&
        ((progress: DownloadProgress) =>
          emit({ type: "artifact_download_progress", ...progress } satisfies ArtifactDownloadProgressEvent));
      const { job, attempts } = await prepared.run({ signal, invocationId, ...optional({ onProgress }) });
      tally.attempts = attempts;
      return downloads.result(job, plan.license);
    },
  };
}

/**
 * The broker call of a download (also what its permission request is built from).
 * @param request the download and the call's session, principal and ids
 * @returns the call of the built-ins' source
 */
export function downloadCall(request: DownloadRequest): RefusedCall {
  return {
    sourceId: BUILTIN_SOURCE_ID,
    toolId: ARTIFACT_DOWNLOAD_TOOL_ID,
    input: {
      mcpInvocationId: request.mcpInvocationId,
      candidateId: request.candidateId,
      ...(request.destinationPath === undefined ? {} : { destinationPath: request.destinationPath }),
    },
    sessionId: request.sessionId,
    ...optional({ principal: request.principal, threadId: request.threadId, toolCallId: request.toolCallId }),
  };
}

/** What `downloadArtifact` calls: the runtime's broker and download jobs (a `Governance` has both). */
export interface DownloadArtifactRuntime {
  broker: { invoke(request: InvokeRequest): Promise<InvokeOutcome> };
  downloads: { readonly jobs: Pick<DownloadJobStore, "get"> };
}

/** Input of `downloadArtifact`: the runtime and the download. */
export interface DownloadArtifactOptions extends DownloadRequest {
  /** The broker and the job store (a `Governance`). */
  governance: DownloadArtifactRuntime;
}

/**
 * Downloads one candidate: one `artifact_download` call through the broker, so one row and the broker's
 * replay rule (a `threadId:toolCallId` replays only the same session's, principal's same call; any other
 * use is refused). A job that failed or was cancelled is a result, as a completed one is.
 * @param request the runtime (`governance`: the broker and the job store), invocation, candidate,
 *   destination, session, principal, call ids, progress hook and signal (aborting it cancels the job:
 *   it ends `cancelled` with its row)
 * @returns the terminal job result
 * @throws GovernanceError a refusal before any job (`NOT_FOUND`, `PERMISSION_DENIED`, `LICENSE_BLOCKED`,
 *   `INVALID_INPUT`, `SOURCE_DISABLED`), recorded on the call's row; `CANCELLED` (no row) after `close()`
 * @example
 * const result = await downloadArtifact({ governance, mcpInvocationId, candidateId, sessionId: "t1" });
 */
export async function downloadArtifact(request: DownloadArtifactOptions): Promise<DownloadResult> {
  requireGovernanceOption(request, "downloadArtifact");
  const runtime = request.governance;
  const { onProgress, signal } = request;
  try {
    const outcome = await runtime.broker.invoke({
      ...downloadCall(request),
      ...optional({ signal }),
      ...(onProgress
        ? {
            onEvent: (event: Record<string, unknown>) => {
              const { type: _type, ...progress } = event;
              onProgress(progress as unknown as DownloadProgress);
            },
          }
        : {}),
    });
    return downloadResultOf(outcome.result);
  } catch (error) {
    const ended = await endedDownload(runtime, request, error);
    if (ended) return ended;
    throw error;
  }
}

/**
 * The job result of a call whose job failed or was cancelled: carried by the run's error, or (for the
 * replay of such a call, which the broker checked is this very call) read from the call's job.
 */
async function endedDownload(
  runtime: DownloadArtifactRuntime,
  request: DownloadRequest,
  error: unknown,
): Promise<DownloadResult | undefined> {
  if (!isGovernanceError(error)) return undefined;
  const carried = error.data?.download as DownloadResult | undefined;
  if (carried !== undefined) return carried;
  const { threadId, toolCallId } = request;
  if (error.data?.replayed !== true || threadId === undefined || toolCallId === undefined) return undefined;
  const job = await runtime.downloads.jobs.get(callJobId(threadId, toolCallId));
  if (!job || job.sessionId !== request.sessionId || job.status === "completed") return undefined;
  return TERMINAL_DOWNLOAD_STATES.includes(job.status) ? jobResult(job) : undefined;
}

/**
 * Asks `approval` about a download before it runs, with the permission request the broker will
 * authorize it with (a call that already ran, or that would be refused, is not asked about).
 * @param broker the broker (`authorizationRequest`)
 * @param approval the card or elicitation, if any
 * @param request the download
 * @returns once answered (or when nothing needs asking)
 * @throws LangGraph's interrupt carrying the card
 */
export async function askDownload(
  broker: { authorizationRequest(call: RefusedCall): Promise<AuthorizationRequest> },
  approval: BuiltinCallApproval | undefined,
  request: DownloadRequest,
): Promise<void> {
  await approval?.(
    request.sessionId,
    () => broker.authorizationRequest(downloadCall(request)).catch(() => undefined),
    ARTIFACT_DOWNLOAD_TOOL_ID,
  );
}

/** Options of {@link createArtifactDownloadTool}. */
export interface ArtifactDownloadToolOptions {
  /**
   * Runs the downloads (`governance.broker`): its in-process source plans and runs them; its
   * `authorizationRequest` is what `approval` asks about.
   */
  broker: DownloadArtifactRuntime["broker"] & {
    authorizationRequest(call: RefusedCall): Promise<AuthorizationRequest>;
  };
  /** Where the download jobs live (`governance.downloads`): a replayed failed download is read there. */
  downloads: DownloadArtifactRuntime["downloads"];
  /**
   * Shows the approval card of a dangerous download inside the call's task (LangGraph `interrupt()`)
   * and records the answer before the download starts. `createGovernedAgent` passes one when the
   * runtime enforces permissions. @default none: the broker's permission step decides alone (without a
   * recorded decision, grant or `always_allow`, a dangerous download is refused with "approval required")
   */
  approval?: BuiltinCallApproval | undefined;
  /**
   * The session of a call; a blank or `undefined` answer defers to the thread.
   * @default `configurable.thread_id`, else `"default"` (see `sessionIdOf`)
   */
  sessionId?: (config: LangGraphRunnableConfig) => string | undefined;
  /**
   * Who a call is for (see `PrincipalResolver`): only its grants, approval mode and decisions apply,
   * and its rows and job carry it. @default none: the single user
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
 * (one per call; a denial answers `PERMISSION_DENIED` and starts nothing). A re-run of a call that
 * already ran returns its recorded outcome without asking or downloading again. It returns only when
 * the job is completed, failed or cancelled.
 * @param options the broker, the job store, the optional approval hook and session resolver
 * @returns a structured tool named `artifact_download`
 * @example
 * const tools = [createArtifactDownloadTool({ broker: governance.broker, downloads: governance.downloads }), ...governedTools];
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
          ...optional({ principal: principalOf(config, options.principal), threadId, toolCallId }),
          onProgress: (progress) =>
            config.writer?.({
              type: "artifact_download_progress",
              ...progress,
            } satisfies ArtifactDownloadProgressEvent),
          ...(options.cancelOnAbort ? optional({ signal: config.signal }) : {}),
        };
        // A dangerous download gets the card every call gets, asked about the request the broker
        // authorizes; an invalid or refused call is not asked about: the broker records its refusal.
        await askDownload(options.broker, options.approval, request);
        const result = await downloadArtifact({ governance: options, ...request });
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

/**
 * What a download's permission step renders and its card shows: the plan's public facts (never the
 * random `planId`), so that a re-run of the same call shows the same card and consumes the same
 * decision.
 */
function downloadSubject(plan: DownloadPlan, sourceTitle: string): Record<string, unknown> {
  const { candidate } = plan;
  return {
    mcpInvocationId: plan.mcpInvocationId,
    candidateId: candidate.candidateId,
    sourceId: candidate.sourceId,
    sourceRecordId: candidate.sourceRecordId,
    sourceTitle,
    url: candidate.url,
    urlHost: hostOf(candidate.url),
    fileName: basename(plan.destinationPath),
    destinationPath: plan.destinationPath,
    format: candidate.format,
    kind: candidate.kind,
    license: plan.license,
    ...(candidate.sizeBytes === undefined ? {} : { sizeBytes: candidate.sizeBytes }),
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url; // the plan refuses unparsable URLs; kept total
  }
}
