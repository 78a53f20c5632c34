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
  type ArtifactDownloadToolOptions,
  createArtifactDownloadTool,
  createPaperExtractTool,
  type DownloadFetch,
  type DownloadJob,
  type DownloadJobStore,
  type DownloadNetworkOptions,
  type EvidenceReview,
  type ExtractPdfOptions,
  type ExtractPdfResult,
  extractPdf,
  fullTextExtractions,
  MemoryDownloadJobStore,
  type PaperExtractToolOptions,
  PostgresDownloadJobStore,
  type PdfLimits,
  reviewAnswer,
  reviewEvidence,
  SqliteDownloadJobStore,
} from "../artifacts/index.js";
