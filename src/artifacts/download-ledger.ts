/**
 * Ledger rows of downloads and extractions (the contract is `artifact-ledger-types.ts`): one
 * `InvocationRecord` per call, with the request and the outcome stored in the CAS, so that audit,
 * replay and evidence review read downloads exactly like MCP calls.
 */
import { GovernanceError, type GovernanceErrorCode, hashCanonical } from "../core/index.js";
import type { ContentStore, InvocationRecord, LedgerWriter } from "../governance/audit/index.js";
import { reusedKeyError } from "../governance/broker/index.js";
import { DOWNLOAD_LEDGER_TOOL_ID, type DownloadLedgerEntry } from "./artifact-ledger-types.js";
import type { DownloadJob, DownloadJobError } from "./download-job-store.js";
import { DOWNLOAD_TOOL_DEFINITION_HASH } from "./download-permission.js";
import type { DownloadPlan, DownloadResult } from "./download-types.js";

/** Where rows go. */
export interface ArtifactLedgerDeps {
  /** The ledger's one writer (the broker's): download and extraction rows go through it. */
  ledgerWriter: LedgerWriter;
  store: ContentStore;
  newId: () => string;
}

/** One row to append. */
export interface ArtifactRow {
  /** The row's id, when the caller needs it before the row exists. @default a new id */
  invocationId?: string | undefined;
  sessionId: string;
  /** Who the call was made for. @default none: the single user */
  principal?: string | undefined;
  threadId?: string | undefined;
  /** Absent for a retry or a call made outside a graph. */
  toolCallId?: string | undefined;
  sourceId: string;
  toolId: string;
  /** Clock milliseconds. */
  startedAt: number;
  finishedAt: number;
  attempts: number;
  /** Stored as `requestRef`: the plan, or what the extraction was asked. */
  request: unknown;
  /** Stored as `normalizedRef`: a `DownloadLedgerEntry` or `ExtractionLedgerEntry`. */
  entry?: unknown;
  license?: string | undefined;
  authorizationId?: string | undefined;
  toolDefinitionHash?: string | undefined;
  /** Present exactly when the call failed; the row's status is then `error`. */
  error?: DownloadJobError | undefined;
}

/**
 * Stores the request and entry in the CAS and appends the row.
 * @param deps ledger, CAS and id generator
 * @param row the call
 * @returns the appended record
 * @throws GovernanceError `DUPLICATE_ID` when the `threadId:toolCallId` already has a row
 */
export async function appendArtifactRow(
  deps: ArtifactLedgerDeps,
  row: ArtifactRow,
): Promise<InvocationRecord> {
  const requestRef = (await deps.store.putJson(row.request)).ref;
  const normalizedRef = row.entry === undefined ? undefined : (await deps.store.putJson(row.entry)).ref;
  const optional = {
    principal: row.principal,
    threadId: row.threadId,
    toolCallId: row.toolCallId,
    normalizedRef,
    license: row.license,
    authorizationId: row.authorizationId,
    toolDefinitionHash: row.toolDefinitionHash,
  };
  const record: InvocationRecord = {
    invocationId: row.invocationId ?? deps.newId(),
    sessionId: row.sessionId,
    sourceId: row.sourceId,
    toolId: row.toolId,
    status: row.error === undefined ? "ok" : "error",
    startedAt: new Date(row.startedAt).toISOString(),
    finishedAt: new Date(row.finishedAt).toISOString(),
    durationMs: Math.max(0, row.finishedAt - row.startedAt),
    attempts: row.attempts,
    cacheHit: false,
    queueWaitMs: 0,
    requestRef,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    ...(row.error === undefined ? {} : { error: { ...row.error, attempts: row.attempts } }),
  };
  await deps.ledgerWriter.append(record);
  return record;
}

/** How one download call ended, for {@link appendDownloadRow}. */
export interface DownloadOutcome {
  startedAt: number;
  finishedAt: number;
  attempts: number;
  authorizationId?: string | undefined;
  /** The job at its terminal state; absent for a refusal before any job. */
  job?: DownloadJob;
  /** Why it was refused (no job) or how the job failed. */
  error?: DownloadJobError | undefined;
  /** The call's arguments as given (`builtinInput`), stored with the plan; absent for a retry. */
  input?: Record<string, unknown> | undefined;
}

/**
 * Appends the row of one download call: the plan as `requestRef`, the job's `DownloadLedgerEntry` as
 * `normalizedRef`, status `ok` only when the job completed.
 * @param deps ledger, CAS and id generator
 * @param plan the plan (its `toolCallId` keys the row; a retry's plan has none)
 * @param outcome times, attempts, authorization and the terminal job or refusal
 * @returns the appended record
 * @throws GovernanceError `DUPLICATE_ID` when the call already has a row
 */
export function appendDownloadRow(
  deps: ArtifactLedgerDeps,
  plan: DownloadPlan,
  outcome: DownloadOutcome,
): Promise<InvocationRecord> {
  const { job } = outcome;
  return appendArtifactRow(deps, {
    sessionId: plan.sessionId,
    principal: plan.principal,
    threadId: plan.threadId,
    toolCallId: plan.toolCallId,
    sourceId: plan.candidate.sourceId,
    toolId: DOWNLOAD_LEDGER_TOOL_ID,
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    attempts: outcome.attempts,
    request: outcome.input === undefined ? plan : { ...plan, input: outcome.input },
    license: plan.license,
    authorizationId: outcome.authorizationId,
    toolDefinitionHash: DOWNLOAD_TOOL_DEFINITION_HASH,
    ...(job === undefined ? {} : { entry: downloadLedgerEntry(job) }),
    error: job?.status === "completed" ? undefined : (outcome.error ?? job?.error),
  });
}

/** A built-in call whose `threadId:toolCallId` already names another call (see {@link sameBuiltinCall}). */
export interface ForeignCall {
  sessionId: string;
  principal?: string | undefined;
  threadId?: string | undefined;
  toolCallId?: string | undefined;
  /** The source of the other call (the row is the operator's; the caller is not told). */
  sourceId: string;
  toolId: string;
  request: unknown;
  startedAt: number;
  finishedAt: number;
}

/**
 * Refuses a built-in call whose `threadId:toolCallId` key another call used first (another session,
 * tool or arguments) exactly as the broker refuses a reused key (`reusedKeyError`): `PERMISSION_DENIED`
 * (`data.reason: "tool_call_id_reused"`), audited on a row of the asking session without the tool call
 * id (the key stays the first call's). Nothing of the other call (its job, file, source or outcome) is
 * in the message.
 * @param deps ledger, CAS and id generator
 * @param call the refused call
 * @returns never
 * @throws GovernanceError `PERMISSION_DENIED`, after its row is appended
 */
export async function refuseForeignCall(deps: ArtifactLedgerDeps, call: ForeignCall): Promise<never> {
  const invocationId = deps.newId();
  const refusal = reusedKeyError(call, invocationId);
  await appendArtifactRow(deps, {
    invocationId,
    sessionId: call.sessionId,
    principal: call.principal,
    threadId: call.threadId,
    sourceId: call.sourceId,
    toolId: call.toolId,
    startedAt: call.startedAt,
    finishedAt: call.finishedAt,
    attempts: 0,
    request: call.request,
    error: { code: refusal.code, message: refusal.message, retryable: false },
  });
  throw refusal;
}

/** A built-in call as its `threadId:toolCallId` key is bound to it (the broker's rule for every tool). */
export interface BuiltinCall {
  sessionId: string;
  /** Who it is made for; a key one principal used replays nothing for another. */
  principal?: string | undefined;
  /** `artifact_download` or `paper_extract_pdf`. */
  toolId: string;
  /** The tool's arguments as given (see {@link builtinInput}). */
  input: Record<string, unknown>;
}

/**
 * The arguments of a built-in call as its key binds them, absent ones dropped. Stored as the `input`
 * of its row's request object, so that a replay compares them like the broker compares an MCP call's.
 * @param fields the tool's arguments
 * @returns the arguments that are set
 */
export function builtinInput(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/**
 * Whether a recorded row is the very call now made again under its key: the same session, tool and
 * arguments, the binding the broker applies to every MCP call. A row of another tool (an MCP call's), of
 * another session or with other arguments is another call, which the key must not replay. A download
 * row's request object holds its arguments as `input` beside the plan; an extraction's request object
 * is its one argument (`artifactJobId`), and a download row written before rows carried `input` is
 * compared on the identifiers its plan holds.
 * @param store the CAS holding the row's request object
 * @param row the key's row
 * @param call the call now made
 * @returns true when the row is this call's
 */
export async function sameBuiltinCall(
  store: ContentStore,
  row: InvocationRecord,
  call: BuiltinCall,
): Promise<boolean> {
  if (row.sessionId !== call.sessionId || row.toolId !== call.toolId) return false;
  if (row.principal !== call.principal) return false;
  const stored =
    row.requestRef === undefined
      ? undefined
      : await store.getJson<Record<string, unknown> & { candidate?: { candidateId?: unknown } }>(
          row.requestRef,
        );
  if (stored?.input !== undefined) return hashCanonical(stored.input) === hashCanonical(call.input);
  for (const key of ["mcpInvocationId", "candidateId", "artifactJobId"]) {
    const recorded = stored?.[key] ?? (key === "candidateId" ? stored?.candidate?.candidateId : undefined);
    if (call.input[key] !== undefined && recorded !== undefined && recorded !== call.input[key]) return false;
  }
  return true;
}

/**
 * Appends the row of a job that a crashed process left unfinished and `cancel` ended: its own call's
 * row when that call has none yet (so the call's outcome is audited), else a row without call ids.
 * @param deps ledger, CAS and id generator
 * @param job the job, now cancelled
 * @returns the appended record
 */
export async function appendOrphanCancelRow(
  deps: ArtifactLedgerDeps,
  job: DownloadJob,
): Promise<InvocationRecord> {
  const recorded =
    job.threadId !== undefined && job.toolCallId !== undefined
      ? await deps.ledgerWriter.reader.findByCall(job.threadId, job.toolCallId)
      : undefined;
  const keyed = recorded === undefined;
  return appendArtifactRow(deps, {
    sessionId: job.sessionId,
    ...(keyed ? { threadId: job.threadId, toolCallId: job.toolCallId } : {}),
    sourceId: job.sourceId,
    toolId: DOWNLOAD_LEDGER_TOOL_ID,
    startedAt: job.createdAt,
    finishedAt: job.updatedAt,
    attempts: job.attempts,
    request: {
      planId: job.planId,
      jobId: job.jobId,
      mcpInvocationId: job.mcpInvocationId,
      candidateId: job.candidateId,
      destinationPath: job.destinationPath,
      cancelledAfterCrash: true,
    },
    toolDefinitionHash: DOWNLOAD_TOOL_DEFINITION_HASH,
    entry: downloadLedgerEntry(job),
    error: job.error,
  });
}

/**
 * The CAS entry of a download's row, from its job at a terminal state.
 * @param job the terminal job
 * @returns the entry (`actualChecksum` only when completed)
 */
export function downloadLedgerEntry(job: DownloadJob): DownloadLedgerEntry {
  return {
    kind: "artifact_download",
    planId: job.planId,
    jobId: job.jobId,
    mcpInvocationId: job.mcpInvocationId,
    candidateId: job.candidateId,
    sourceId: job.sourceId,
    sourceRecordId: job.sourceRecordId,
    url: job.url,
    finalPath: job.finalPath,
    destinationPath: job.destinationPath,
    ...(job.status === "completed" && job.actualChecksum !== undefined
      ? { actualChecksum: job.actualChecksum }
      : {}),
    bytesDownloaded: job.bytesDownloaded,
    status: job.status as DownloadLedgerEntry["status"],
  };
}

/**
 * The job id of a download made by a graph tool call: derived from `threadId:toolCallId`, so a
 * re-run of the call (a resumed task, a restarted process) finds its job instead of starting another.
 * @param threadId the LangGraph thread
 * @param toolCallId the tool call
 * @returns a UUID-shaped id
 */
export function callJobId(threadId: string, toolCallId: string): string {
  const hex = hashCanonical([DOWNLOAD_LEDGER_TOOL_ID, threadId, toolCallId]);
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    "-",
  );
}

/**
 * The outcome a download row recorded, for a call whose job is gone (an in-memory job store after a
 * restart). A refusal before any job (a denial) is thrown again as it was recorded.
 * @param store the CAS holding the row's entry
 * @param row an `artifact_download` row
 * @returns the recorded terminal result
 * @throws GovernanceError the recorded refusal (e.g. `PERMISSION_DENIED`) for a row without an entry
 */
export async function recordedDownload(store: ContentStore, row: InvocationRecord): Promise<DownloadResult> {
  const error = row.error && {
    code: row.error.code,
    message: row.error.message,
    retryable: row.error.retryable,
  };
  if (row.normalizedRef === undefined) {
    throw new GovernanceError(
      (error?.code ?? "PERMISSION_DENIED") as GovernanceErrorCode,
      error?.message ?? "The download was refused.",
      { data: { invocationId: row.invocationId } },
    );
  }
  const entry = await store.getJson<DownloadLedgerEntry>(row.normalizedRef);
  return {
    candidateId: entry.candidateId,
    planId: entry.planId,
    jobId: entry.jobId,
    finalPath: entry.finalPath,
    ...(entry.actualChecksum === undefined ? {} : { actualChecksum: entry.actualChecksum }),
    bytesDownloaded: entry.bytesDownloaded,
    sourceId: entry.sourceId,
    sourceRecordId: entry.sourceRecordId,
    status: entry.status,
    warnings: [],
    ...(error === undefined ? {} : { error }),
  };
}
