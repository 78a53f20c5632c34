/**
 * Extraction of a downloaded paper: bounded pdf.js extraction of a completed PDF
 * download into `<dataDir>/papers/<jobId>/`, recorded as one `paper_extract_pdf` ledger row per call.
 * Only a successful extraction marks a record as full text. It only reads download jobs, so a failed
 * extraction never changes the download's state.
 */
import { randomUUID } from "node:crypto";
import { toGovernanceError } from "../contract/index.js";
import {
  type Clock,
  GovernanceError,
  type GovernanceErrorCode,
  isGovernanceError,
  systemClock,
} from "../core/index.js";
import type { ContentStore, InvocationRecord, LedgerWriter } from "../governance/audit/index.js";
import { EXTRACTION_LEDGER_TOOL_ID, type ExtractionLedgerEntry } from "./artifact-ledger-types.js";
import type { DownloadJob, DownloadJobStore } from "./download-job-store.js";
import {
  appendArtifactRow,
  type BuiltinCall,
  builtinInput,
  refuseForeignCall,
  sameBuiltinCall,
} from "./download-ledger.js";
import { extractPdf, type PdfExtractor } from "./extract-pdf.js";
import { paperFolder } from "./paper-text.js";
import type { PdfLimits } from "./pdf-limits.js";

/** What an extraction needs: the download jobs (read only), the ledger and CAS, and where to write. */
export interface PaperExtractionRuntime {
  /** Where the download jobs live (`governance.downloads`); only read, never written. */
  downloads: { readonly jobs: Pick<DownloadJobStore, "get"> };
  /** Writes one row per extraction call (`governance.ledgerWriter`). */
  ledgerWriter: LedgerWriter;
  /** Holds the rows' request and `ExtractionLedgerEntry` (`governance.store`). */
  store: ContentStore;
  /** The data directory; extractions go to `<dataDir>/papers/<jobId>/`. */
  dataDir: string;
  /** Extraction bounds. @default 50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s */
  limits?: Partial<PdfLimits>;
  /** The parser: pdftotext when on the PATH, else pdf.js (see `PdfExtractor`). @default "auto" */
  extractor?: PdfExtractor;
  /** Times the wall-clock bound and the rows. @default systemClock */
  clock?: Clock;
  /** Id generator of the rows. @default crypto.randomUUID */
  newId?: () => string;
}

/** One extraction call. */
export interface PaperExtractionRequest {
  /** The `jobId` of a completed `artifact_download` of a PDF paper. */
  artifactJobId: string;
  sessionId: string;
  threadId?: string;
  /** With `threadId`, the idempotency key: a re-run returns the recorded outcome. */
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
 * Extracts a completed PDF download of the calling session and appends its ledger row: `ok` with an `ExtractionLedgerEntry`
 * (`fullTextRetrieved: true`, `contentScope: "full-text"`), or `error` with the structured error.
 * Idempotent per job (the files of an earlier extraction of the same bytes are reused) and per call
 * (a `threadId:toolCallId` that has a row returns what it recorded, appending nothing).
 * @param runtime jobs, ledger, CAS, data directory, limits and seams
 * @param request the download job and the call's session and ids
 * @returns paths, page count, warnings and the record's identity
 * @throws GovernanceError `UNKNOWN_ID` for an unknown job (no row: it names no source);
 *   `PERMISSION_DENIED` (audited) for a job another session downloaded, or a `threadId:toolCallId`
 *   another session's extraction used;
 *   `INVALID_INPUT` for a job that is not completed (retryable while it runs) or not a PDF;
 *   `RESPONSE_TOO_LARGE`, `TIMEOUT`, `NORMALIZATION_FAILED` when a bound is crossed or pdf.js fails
 * @example
 * const result = await extractDownloadedPaper(
 *   { downloads: governance.downloads, ledgerWriter: governance.ledgerWriter, store: governance.store, dataDir: governance.dataDir },
 *   { artifactJobId, sessionId: "t1" },
 * );
 */
export async function extractDownloadedPaper(
  runtime: PaperExtractionRuntime,
  request: PaperExtractionRequest,
): Promise<PaperExtractResult> {
  const { threadId, toolCallId } = request;
  const hasKey = threadId !== undefined && toolCallId !== undefined;
  const clock = runtime.clock ?? systemClock;
  const startedAt = clock.now();
  const rows = {
    ledgerWriter: runtime.ledgerWriter,
    store: runtime.store,
    newId: runtime.newId ?? randomUUID,
  };
  const input = builtinInput({ artifactJobId: request.artifactJobId });
  const call = { sessionId: request.sessionId, toolId: EXTRACTION_LEDGER_TOOL_ID, input };
  const prior = hasKey ? await runtime.ledgerWriter.reader.findByCall(threadId, toolCallId) : undefined;
  // One replay rule with the broker's: the key replays only the call that first used it.
  if (prior) {
    if (!(await sameBuiltinCall(runtime.store, prior, call))) {
      return refuseForeignCall(rows, {
        ...request,
        sourceId: prior.sourceId,
        toolId: EXTRACTION_LEDGER_TOOL_ID,
        request: { artifactJobId: request.artifactJobId },
        startedAt,
        finishedAt: clock.now(),
      });
    }
    return replay(runtime.store, prior);
  }
  const job = await runtime.downloads.jobs.get(request.artifactJobId);
  if (!job) {
    throw new GovernanceError("UNKNOWN_ID", `No download job '${request.artifactJobId}'.`, {
      data: { artifactJobId: request.artifactJobId },
    });
  }
  // Only the session that downloaded a job extracts it (and so reads it, or offers it as a resource).
  if (job.sessionId !== request.sessionId) {
    const refusal = jobOfAnotherSession(request.artifactJobId);
    await appendArtifactRow(rows, {
      sessionId: request.sessionId,
      threadId,
      sourceId: job.sourceId,
      toolId: EXTRACTION_LEDGER_TOOL_ID,
      startedAt,
      finishedAt: clock.now(),
      attempts: 0,
      request: { artifactJobId: request.artifactJobId },
      error: { code: refusal.code, message: refusal.message, retryable: false },
    });
    throw refusal;
  }
  const row = (entry: ExtractionLedgerEntry | undefined, error: GovernanceError | undefined) =>
    appendArtifactRow(rows, {
      sessionId: request.sessionId,
      threadId,
      toolCallId,
      sourceId: job.sourceId,
      toolId: EXTRACTION_LEDGER_TOOL_ID,
      startedAt,
      finishedAt: clock.now(),
      attempts: 1,
      // The request object is the call's arguments, which its key is bound to (`sameBuiltinCall`).
      request: { artifactJobId: job.jobId },
      entry,
      error: error && { code: error.code, message: error.message, retryable: error.retryable },
    });
  let entry: ExtractionLedgerEntry;
  try {
    checkJob(job);
    entry = await extractShared(runtime, job);
  } catch (error) {
    // A PDF that pdf.js cannot read fails without a structured signal: the extraction failed.
    const governed = toGovernanceError(error, { unrecognized: "NORMALIZATION_FAILED" });
    const twin = await appendOrReplay(runtime, call, request, () => row(undefined, governed));
    if (twin) return twin;
    throw governed;
  }
  return (await appendOrReplay(runtime, call, request, () => row(entry, undefined))) ?? toResult(entry);
}

/**
 * Appends a row; when the same call raced itself and recorded first, its outcome is returned. A row
 * another call recorded under the key meanwhile is never served as this call's: `DUPLICATE_ID` is thrown.
 */
async function appendOrReplay(
  runtime: PaperExtractionRuntime,
  call: BuiltinCall,
  request: PaperExtractionRequest,
  append: () => Promise<InvocationRecord>,
): Promise<PaperExtractResult | undefined> {
  try {
    await append();
    return undefined;
  } catch (error) {
    const { threadId, toolCallId } = request;
    if (!isGovernanceError(error) || error.code !== "DUPLICATE_ID" || !threadId || !toolCallId) throw error;
    const twin = await runtime.ledgerWriter.reader.findByCall(threadId, toolCallId);
    if (twin === undefined || !(await sameBuiltinCall(runtime.store, twin, call))) throw error;
    return replay(runtime.store, twin);
  }
}

function extractShared(runtime: PaperExtractionRuntime, job: DownloadJob): Promise<ExtractionLedgerEntry> {
  const outDir = paperFolder(runtime.dataDir, job.jobId);
  const running = inFlight.get(outDir);
  if (running) return running;
  const work = extractPdf({ pdfPath: job.finalPath, outDir, id: job.jobId }, runtime.limits ?? {}, {
    ...(runtime.clock ? { clock: runtime.clock } : {}),
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
      : `Download job ${job.jobId} is still ${job.status}; call ${EXTRACTION_LEDGER_TOOL_ID} again in a later turn.`,
    { retryable: !finished, data: { artifactJobId: job.jobId, status: job.status } },
  );
}

async function replay(store: ContentStore, row: InvocationRecord): Promise<PaperExtractResult> {
  if (row.status === "error" || row.normalizedRef === undefined) {
    throw new GovernanceError(
      (row.error?.code ?? "NORMALIZATION_FAILED") as GovernanceErrorCode,
      row.error?.message ?? "The extraction failed.",
      { retryable: row.error?.retryable ?? false, data: { invocationId: row.invocationId } },
    );
  }
  return toResult(await store.getJson<ExtractionLedgerEntry>(row.normalizedRef));
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
