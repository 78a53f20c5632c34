export {
  type ArtifactDownloadProgressEvent,
  type ArtifactDownloadToolOptions,
  askDownload,
  createArtifactDownloadTool,
  type DownloadArtifactRuntime,
  downloadArtifact,
  downloadCall,
} from "./artifact-download-tool.js";
export {
  ARTIFACT_SOURCE_ID,
  ARTIFACT_SOURCE_MANIFEST,
  type ArtifactSourceOptions,
  createArtifactSource,
} from "./artifact-source.js";
export type { ManifestLookup } from "./download-candidate.js";
export type { DownloadFetch } from "./download-fetch.js";
export type {
  DownloadLookup,
  PrivateAddressAllowance,
  ResolvedAddress,
} from "./download-host-check.js";
export {
  ACTIVE_DOWNLOAD_STATES,
  cancelStoredJob,
  type DownloadJob,
  type DownloadJobError,
  type DownloadJobFilter,
  type DownloadJobStatus,
  type DownloadJobStore,
  type DownloadJobUpdateOptions,
  MemoryDownloadJobStore,
  TERMINAL_DOWNLOAD_STATES,
  unknownJob,
} from "./download-job-store.js";
export {
  callJobId,
  type DownloadHooks,
  DownloadManager,
  type DownloadRecords,
  type DownloadRun,
  type PreparedDownload,
} from "./download-manager.js";
export { PostgresDownloadJobStore } from "./download-postgres-job-store.js";
export { downloadJobsPath, SqliteDownloadJobStore } from "./download-sqlite-job-store.js";
export {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadManagerOptions,
  type DownloadNetworkOptions,
  type DownloadPlan,
  type DownloadProgress,
  type DownloadRequest,
  type DownloadResult,
} from "./download-types.js";
export type { Claim, Evidence } from "./evidence-claims.js";
export {
  type ExtractPdfInput,
  type ExtractPdfOptions,
  type ExtractPdfResult,
  extractPdf,
  hasPdfSignature,
  type PdfExtractor,
} from "./extract-pdf.js";
export {
  type EvidenceRuntime,
  type ExtractionIndex,
  type FullTextExtraction,
  fullTextExtractions,
  loadExtractionIndex,
} from "./full-text-extractions.js";
export {
  type BuiltinCallApproval,
  createPaperExtractTool,
  PAPER_EXTRACT_TOOL_ID,
  type PaperExtractResult,
  type PaperExtractToolOptions,
  type TurnToolCallIds,
} from "./paper-extract-tool.js";
export {
  askExtraction,
  extractDownloadedPaper,
  extractionCall,
  type PaperExtractionRequest,
  type PaperExtractionRuntime,
} from "./paper-extraction.js";
export {
  PAPERS_DIR_NAME,
  paperTextPath,
  type ReadPaperTextOptions,
  readPaperManifest,
  readPaperText,
} from "./paper-text.js";
export { DEFAULT_PDF_LIMITS, type PdfLimits } from "./pdf-limits.js";
export type { PdfManifest, PdfManifestPage } from "./pdf-manifest.js";
export {
  PdfWorkerPool,
  type PdfWorkerPoolOptions,
  type PdfWorkerPoolStats,
  sharedPdfWorkerPool,
} from "./pdf-worker-pool.js";
export {
  type AnswerCitation,
  type AnswerFact,
  type AnswerReview,
  type ReviewAnswerOptions,
  reviewAnswer,
} from "./review-answer.js";
export {
  type EvidenceRejection,
  type EvidenceReview,
  type ReviewEvidenceOptions,
  type ReviewedClaim,
  type ReviewedEvidence,
  type ReviewedRecord,
  reviewEvidence,
} from "./review-evidence.js";
