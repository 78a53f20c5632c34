/** The `pubmed` source: PubMed through NCBI E-utilities, open-access files through the PMC OA service. */
import { EUTILS_ENDPOINT } from "../ncbi/eutils.js";
import type { SourceModule } from "../source-module.js";
import { pubmedPreparePaperDownloadTool } from "./pubmed-prepare-download.js";
import { pubmedFetchAbstractsTool, pubmedFindRelatedTool, pubmedSearchTool } from "./pubmed-search-tools.js";

/** The `pubmed` source module (manifest: manifests/pubmed.json). */
export const pubmedSource: SourceModule = {
  id: "pubmed",
  attribution: "PubMed, U.S. National Library of Medicine (NCBI E-utilities)",
  license: "NCBI data usage policy; abstracts may be copyrighted by publishers",
  endpoints: [
    EUTILS_ENDPOINT,
    { key: "pmc-oa", defaultBaseUrl: "https://www.ncbi.nlm.nih.gov/pmc/utils/oa" },
  ],
  tools: [pubmedSearchTool, pubmedFetchAbstractsTool, pubmedFindRelatedTool, pubmedPreparePaperDownloadTool],
};
