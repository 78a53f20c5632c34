/**
 * Extraction of a downloaded paper, the built-in `paper_extract_pdf` of the in-process source
 * (`artifact-source.ts`): bounded extraction of a completed PDF download into
 * `<dataDir>/papers/<jobId>/`. The broker calls it like any tool (one replay rule, permission step and
 * row). Only a successful extraction marks a record as full text. It only reads download jobs, so a
 * failed extraction never changes the download's state.
 */
import { type McpToolResult, toGovernanceError } from "../contract/index.js";
import { type Clock, GovernanceError, optional } from "../core/index.js";
import type { InProcessCall, InvokeRequest, PreparedCall, RefusedCall } from "../governance/broker/index.js";
import type { ToolManifest } from "../governance/manifests/index.js";
import type { AuthorizationRequest, AuthorizeResult } from "../governance/permissions/index.js";
import type { ExtractionLedgerEntry } from "./artifact-ledger-types.js";
import type { DownloadJob, DownloadJobStore } from "./download-job-store.js";
import { extractPdf, type PdfExtractor } from "./extract-pdf.js";
import { paperFolder } from "./paper-text.js";
import type { PdfLimits } from "./pdf-limits.js";

/** The model-visible name of the tool. */
export const PAPER_EXTRACT_TOOL_ID = "paper_extract_pdf";

/** The `sourceId` of the built-ins' calls (`ARTIFACT_SOURCE_ID`), spelt here to keep imports one-way. */
const BUILTIN_SOURCE_ID = "sciencegate";

/** The manifest of `paper_extract_pdf`: it reads a download of the session and writes only its text. */
export const PAPER_EXTRACT_TOOL: ToolManifest = {
  id: PAPER_EXTRACT_TOOL_ID,
  description:
    "Extract the text of a completed artifact_download PDF (by its jobId) with bounds on pages, bytes, " +
    "characters and time. Returns the path of fulltext.md (a '## Page N' section per page), of " +
    "manifest.json, the page count and warnings. Call it in a turn after the download finished.",
  kind: "analysis",
  mcpToolName: PAPER_EXTRACT_TOOL_ID,
  inputSchema: {
    type: "object",
    properties: {
      artifactJobId: {
        type: "string",
        minLength: 1,
        description: "The jobId of a completed artifact_download of a PDF paper.",
      },
    },
    required: ["artifactJobId"],
    additionalProperties: false,
  },
  // It reads the session's own download and writes only under the data directory: not dangerous by
  // default (a `strict` policy or the app's predicate may still make it so).
  readOnly: true,
  permission: {
    action: "paper:extract",
    resourceTemplate: "paper:{artifactJobId}",
    summaryTemplate: "Extract the text of the PDF of download job {artifactJobId}",
  },
  retryPolicy: {},
  timeoutMs: 120_000,
  routing: { keywords: [], mode: "off", priority: 0 },
  promptFragment: "",
};

/** What extractions need: the download jobs (read only), where to write, the bounds and the clock. */
export interface PaperExtractionOptions {
  /** Where the download jobs live; only read, never written. */
  jobs: Pick<DownloadJobStore, "get">;
  /** The data directory; extractions go to `<dataDir>/papers/<jobId>/`. */
  dataDir: string;
  /** Extraction bounds. @default 50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s */
  limits?: Partial<PdfLimits> | undefined;
  /** The parser: pdftotext when on the PATH, else pdf.js (see `PdfExtractor`). @default "auto" */
  extractor?: PdfExtractor | undefined;
  /** Times the wall-clock bound and the results. */
  clock: Clock;
}

/** What `extractDownloadedPaper` calls: the runtime's broker (a `Governance` has it). */
export interface PaperExtractionRuntime {
  broker: {
    /** Runs one governed call (`Broker.invoke`): here, the extraction of the built-ins' source. */
    invoke(request: InvokeRequest): Promise<{ result: McpToolResult }>;
  };
}

/** One extraction call. */
export interface PaperExtractionRequest {
  /** The `jobId` of a completed `artifact_download` of a PDF paper. */
  artifactJobId: string;
  sessionId: string;
  /** Who the call is for: its rows carry it, and only its grants, mode and decisions apply. */
  principal?: string | undefined;
  threadId?: string;
  /** With `threadId`, the broker's replay key: a re-run returns the recorded outcome. */
  toolCallId?: string;
}

/** What a successful extraction returns (the JSON of the tool message). */
export interface PaperExtractResult {
  artifactJobId: string;
  extractionJobId: string;
  textPath: string;
  manifestPath: string;
  pageCount: number;
  warnings: string[];
  /** The record whose full text this is. */
  sourceId: string;
  sourceRecordId: string;
  /** Only a successful extraction makes a record full text. */
  fullTextRetrieved: true;
  contentScope: "full-text";
}

/** Extractions running now, by output folder: a concurrent twin shares the work. */
const inFlight = new Map<string, Promise<ExtractionLedgerEntry>>();

/**
 * Extracts a completed PDF download of the calling session: one `paper_extract_pdf` call through the
 * broker, so one row (`ok` with the `ExtractionLedgerEntry`, or `error`) and the broker's replay rule
 * (a `threadId:toolCallId` replays only the same session's same call, any other use is refused).
 * Idempotent per job (the files of an earlier extraction of the same job are reused).
 * @param runtime the broker (a `Governance`)
 * @param request the download job and the call's session and ids
 * @returns paths, page count, warnings and the record's identity
 * @throws GovernanceError `UNKNOWN_ID` for an unknown job; `PERMISSION_DENIED` for a job another
 *   session downloaded, or a key another call used; `INVALID_INPUT` for a job that is not completed
 *   (retryable while it runs) or not a PDF; `RESPONSE_TOO_LARGE`, `TIMEOUT`, `NORMALIZATION_FAILED`
 *   when a bound is crossed or the parser fails; each recorded on the call's row
 * @example
 * const result = await extractDownloadedPaper(governance, { artifactJobId, sessionId: "t1" });
 */
export async function extractDownloadedPaper(
  runtime: PaperExtractionRuntime,
  request: PaperExtractionRequest,
): Promise<PaperExtractResult> {
  const outcome = await runtime.broker.invoke(extractionCall(request));
  return toResult(outcome.result as unknown as ExtractionLedgerEntry);
}

/**
 * Asks a person about a built-in call before it runs, given the permission request the broker will
 * authorize it with (the approval card of `createAuthorizationApproval`, the gateway's elicitation):
 * the answer is recorded as a decision the broker's permission step then consumes. It may
 * `interrupt()`. A denial means no card could be shown (the graph cannot pause); the extraction tool
 * lets the broker decide (and record the refusal) either way.
 */
export type BuiltinCallApproval = (
  sessionId: string,
  request: () => Promise<AuthorizationRequest | undefined>,
  name: string,
) => Promise<AuthorizeResult | undefined>;

/**
 * Asks `approval` about an extraction before it runs, with the permission request the broker will
 * authorize it with (an invalid or refused call is not asked about: the broker records its refusal).
 * @param broker the broker (`authorizationRequest`)
 * @param approval the card or elicitation, if any
 * @param request the extraction
 * @returns once answered (or when nothing needs asking)
 * @throws LangGraph's interrupt carrying the card
 */
export async function askExtraction(
  broker: { authorizationRequest(call: RefusedCall): Promise<AuthorizationRequest> },
  approval: BuiltinCallApproval | undefined,
  request: PaperExtractionRequest,
): Promise<void> {
  await approval?.(
    request.sessionId,
    () => broker.authorizationRequest(extractionCall(request)).catch(() => undefined),
    PAPER_EXTRACT_TOOL_ID,
  );
}

/**
 * The broker call of an extraction (also what its permission request is built from).
 * @param request the download job and the call's session, principal and ids
 * @returns the call of the built-ins' source
 */
export function extractionCall(request: PaperExtractionRequest): RefusedCall {
  return {
    sourceId: BUILTIN_SOURCE_ID,
    toolId: PAPER_EXTRACT_TOOL_ID,
    input: { artifactJobId: request.artifactJobId },
    sessionId: request.sessionId,
    ...optional({ principal: request.principal, threadId: request.threadId, toolCallId: request.toolCallId }),
  };
}

/**
 * Prepares one `paper_extract_pdf` call for the broker: every check of the job, with no side effect.
 * @param options jobs, data directory, bounds and clock
 * @param call the validated call
 * @returns the prepared call, whose run extracts the job
 * @throws GovernanceError `UNKNOWN_ID` for an unknown job; `PERMISSION_DENIED` for a job another
 *   session downloaded (naming nothing of it); `INVALID_INPUT` for a job that is not completed
 *   (retryable while it runs)
 */
export async function prepareExtraction(
  options: PaperExtractionOptions,
  call: InProcessCall,
): Promise<PreparedCall> {
  const artifactJobId = String(call.input.artifactJobId);
  const job = await options.jobs.get(artifactJobId);
  if (!job) {
    throw new GovernanceError("UNKNOWN_ID", `No download job '${artifactJobId}'.`, {
      data: { artifactJobId },
    });
  }
  // Only the session that downloaded a job extracts it (and so reads it, or offers it as a resource).
  if (job.sessionId !== call.session) throw jobOfAnotherSession(artifactJobId);
  checkJob(job);
  return {
    async run({ tally }) {
      tally.attempts = 1;
      let entry: ExtractionLedgerEntry;
      try {
        entry = await extractShared(options, job);
      } catch (error) {
        // A PDF that pdf.js cannot read fails without a structured signal: the extraction failed.
        throw toGovernanceError(error, { unrecognized: "NORMALIZATION_FAILED" });
      }
      return extractionResult(entry, options.clock);
    },
  };
}

/**
 * The result of an extraction call: the `ExtractionLedgerEntry` itself, with the fields every tool
 * result has. Its row's normalized object is so the entry, read the same way as rows recorded before
 * extractions went through the broker (`full-text-extractions.ts`, the research object).
 */
function extractionResult(entry: ExtractionLedgerEntry, clock: Clock): McpToolResult {
  return {
    records: [],
    attribution: "Sciencegate",
    license: "see the extracted record's licence",
    retrievedAt: new Date(clock.now()).toISOString(),
    toolId: PAPER_EXTRACT_TOOL_ID,
    untrusted: true,
    ...entry,
    warnings: entry.warnings ?? [],
  };
}

function extractShared(runtime: PaperExtractionOptions, job: DownloadJob): Promise<ExtractionLedgerEntry> {
  const outDir = paperFolder(runtime.dataDir, job.jobId);
  const running = inFlight.get(outDir);
  if (running) return running;
  const work = extractPdf({ pdfPath: job.finalPath, outDir, id: job.jobId }, runtime.limits ?? {}, {
    clock: runtime.clock,
    ...(runtime.extractor ? { extractor: runtime.extractor } : {}),
  })
    .then(
      (r): ExtractionLedgerEntry => ({
        kind: "paper_extract_pdf",
        artifactJobId: job.jobId,
        extractionJobId: `extract-${job.jobId}`,
        mcpInvocationId: job.mcpInvocationId,
        candidateId: job.candidateId,
        sourceId: job.sourceId,
        sourceRecordId: job.sourceRecordId,
        inputSha256: r.inputSha256,
        textPath: r.textPath,
        manifestPath: r.manifestPath,
        pageCount: r.pageCount,
        fullTextRetrieved: true,
        contentScope: "full-text",
        warnings: r.warnings,
      }),
    )
    .finally(() => inFlight.delete(outDir));
  inFlight.set(outDir, work);
  return work;
}

/**
 * The refusal of another session's job. It names nothing of the job (no source, record or status), so
 * a job id read in a ledger or a console gives its holder nothing to act on.
 */
function jobOfAnotherSession(artifactJobId: string): GovernanceError {
  return new GovernanceError(
    "PERMISSION_DENIED",
    `Download job '${artifactJobId}' belongs to another session; a session can only extract its own downloads.`,
    { data: { reason: "job_of_another_session", artifactJobId } },
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

function toResult(entry: ExtractionLedgerEntry): PaperExtractResult {
  return {
    artifactJobId: entry.artifactJobId,
    extractionJobId: entry.extractionJobId,
    textPath: entry.textPath,
    manifestPath: entry.manifestPath,
    pageCount: entry.pageCount,
    warnings: entry.warnings ?? [],
    sourceId: entry.sourceId,
    sourceRecordId: entry.sourceRecordId,
    fullTextRetrieved: true,
    contentScope: "full-text",
  };
}
