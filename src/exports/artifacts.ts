/**
 * `sciencegate/artifacts`: governed downloads, bounded PDF extraction, the paper acquisition graph and
 * evidence review.
 */

export {
  createPaperAcquisitionGraph,
  type PaperAcquisitionGraphOptions,
} from "../adapters/index.js";
export {
  type AnswerReview,
  type ArtifactDownloadProgressEvent,
  type ArtifactDownloadToolOptions,
  createArtifactDownloadTool,
  createPaperExtractTool,
  type DownloadFetch,
  type DownloadJob,
  type DownloadJobStore,
  type DownloadLookup,
  type DownloadNetworkOptions,
  type DownloadResult,
  downloadArtifact,
  type EvidenceReview,
  type ExtractPdfOptions,
  type ExtractPdfResult,
  extractPdf,
  fullTextExtractions,
  MemoryDownloadJobStore,
  type PaperExtractResult,
  type PaperExtractToolOptions,
  type PdfLimits,
  PostgresDownloadJobStore,
  reviewAnswer,
  reviewEvidence,
  SqliteDownloadJobStore,
} from "../artifacts/index.js";
