/** The `europe-pmc` source: the Europe PMC REST API (EMBL-EBI) for search, europepmc.org for full-text PDFs. */
import type { SourceModule } from "../source-module.js";
import { EUROPE_PMC_REST_BASE_URL } from "./europe-pmc-ids.js";
import { europePmcPreparePaperDownloadTool } from "./europe-pmc-prepare-download.js";
import { europePmcSearchTool } from "./europe-pmc-search-tool.js";

/** The `europe-pmc` source module (manifest: manifests/europe-pmc.json). */
export const europePmcSource: SourceModule = {
  id: "europe-pmc",
  attribution: "Europe PMC (EMBL-EBI), https://europepmc.org",
  license: "EMBL-EBI terms of use; abstracts and full texts keep their publishers' and authors' licences",
  endpoints: [{ key: "rest", defaultBaseUrl: EUROPE_PMC_REST_BASE_URL }],
  tools: [europePmcSearchTool, europePmcPreparePaperDownloadTool],
};
