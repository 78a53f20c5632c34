/** The `reactome` source: the Reactome ContentService (search, objects) and AnalysisService (enrichment). */
import type { SourceModule } from "../source-module.js";
import { reactomeLookupPathwayTool, reactomeSearchPathwaysTool } from "./reactome-content-tools.js";
import { reactomeEnrichmentTool } from "./reactome-enrichment-tool.js";

/** The `reactome` source module (manifest: manifests/reactome.json). */
export const reactomeSource: SourceModule = {
  id: "reactome",
  attribution:
    "Reactome pathway knowledgebase (reactome.org), CC BY 4.0; cite Reactome when you use its data.",
  license: "CC-BY-4.0",
  endpoints: [
    { key: "content", defaultBaseUrl: "https://reactome.org/ContentService" },
    { key: "analysis", defaultBaseUrl: "https://reactome.org/AnalysisService" },
  ],
  tools: [reactomeSearchPathwaysTool, reactomeLookupPathwayTool, reactomeEnrichmentTool],
};
