/**
 * `sciencegate/artifacts`: governed downloads, bounded PDF extraction and evidence review (the
 * `src/artifacts` folder). The paper acquisition graph, an executor, is `createPaperAcquisitionGraph` in
 * `sciencegate`.
 */

export {
  type ArtifactDownloadProgressEvent,
  createArtifactDownloadTool,
  createPaperExtractTool,
  type DownloadFetch,
  type DownloadJob,
  type DownloadJobStore,
  type DownloadLookup,
  type DownloadResult,
  downloadArtifact,
  extractPdf,
  fullTextExtractions,
  type PaperExtractResult,
  reviewAnswer,
  reviewEvidence,
} from "../artifacts/index.js";
