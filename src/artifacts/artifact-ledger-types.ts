/**
 * What the audit ledger records of downloads and extractions. A download or an
 * extraction is one `InvocationRecord` like any MCP call: `toolId` is the built-in's name, `sourceId`
 * the candidate's source, `requestRef` the CAS copy of what was asked (the plan, or the job id) and
 * `normalizedRef` the CAS copy of one of the entries below. Evidence review reads them back.
 */

/** `toolId` of a download's ledger row. */
export const DOWNLOAD_LEDGER_TOOL_ID = "artifact_download";
/** `toolId` of an extraction's ledger row. */
export const EXTRACTION_LEDGER_TOOL_ID = "paper_extract_pdf";

/** The CAS entry (`normalizedRef`) of a download's ledger row, written at its terminal state. */
export interface DownloadLedgerEntry {
  kind: "artifact_download";
  planId: string;
  jobId: string;
  /** The successful MCP invocation whose result carried the candidate. */
  mcpInvocationId: string;
  candidateId: string;
  sourceId: string;
  sourceRecordId: string;
  url: string;
  /** Absolute path of the downloaded file. */
  finalPath: string;
  /** The same path relative to the workspace. */
  destinationPath: string;
  /** `sha256:<hex>` of the file, when completed. */
  actualChecksum?: string;
  bytesDownloaded: number;
  status: "completed" | "failed" | "cancelled";
}

/** The CAS entry (`normalizedRef`) of a successful extraction's ledger row. */
export interface ExtractionLedgerEntry {
  kind: "paper_extract_pdf";
  artifactJobId: string;
  extractionJobId: string;
  /** The MCP invocation that returned the downloaded candidate. */
  mcpInvocationId: string;
  candidateId: string;
  sourceId: string;
  sourceRecordId: string;
  /** SHA-256 hex of the PDF that was parsed. */
  inputSha256: string;
  textPath: string;
  manifestPath: string;
  pageCount: number;
  /** The extraction's warnings (e.g. pages that need vision), returned again when the call is replayed. */
  warnings?: string[];
  /** Only a successful extraction makes a record full text. */
  fullTextRetrieved: true;
  contentScope: "full-text";
}
