/** The `arxiv` source: the arXiv API (export.arxiv.org) for metadata, arxiv.org for PDFs. */
import type { SourceModule } from "../source-module.js";
import { arxivLookupTool, arxivPreparePaperDownloadTool, arxivSearchTool } from "./arxiv-tools.js";

/** The `arxiv` source module (manifest: manifests/arxiv.json). */
export const arxivSource: SourceModule = {
  id: "arxiv",
  attribution: "Thank you to arXiv for use of its open access interoperability.",
  license: "CC0-1.0",
  endpoints: [{ key: "api", defaultBaseUrl: "https://export.arxiv.org/api" }],
  tools: [arxivSearchTool, arxivLookupTool, arxivPreparePaperDownloadTool],
};
