/** The `ensembl` source: genes, transcripts, region features and variant effects from the Ensembl REST API. */
import type { SourceModule } from "../source-module.js";
import { ensemblLookupGeneTool, ensemblLookupTranscriptTool } from "./ensembl-lookup-tools.js";
import { ensemblOverlapRegionTool } from "./ensembl-overlap-tool.js";
import { ensemblVariantConsequenceTool } from "./ensembl-vep-tool.js";

/** The `ensembl` source module (manifest: manifests/ensembl.json). */
export const ensemblSource: SourceModule = {
  id: "ensembl",
  attribution:
    "Ensembl (EMBL-EBI), via the Ensembl REST API (rest.ensembl.org); cite Ensembl when you use its data.",
  license: "Ensembl data: free to use without restriction (cite Ensembl)",
  endpoints: [
    { key: "rest", defaultBaseUrl: "https://rest.ensembl.org" },
    // The same API on GRCh37 coordinates, which Ensembl keeps on its own service (human only).
    { key: "rest-grch37", defaultBaseUrl: "https://grch37.rest.ensembl.org" },
  ],
  tools: [
    ensemblLookupGeneTool,
    ensemblLookupTranscriptTool,
    ensemblOverlapRegionTool,
    ensemblVariantConsequenceTool,
  ],
};
