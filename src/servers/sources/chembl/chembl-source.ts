/**
 * The `chembl` source: the ChEMBL web services of EMBL-EBI (compounds, targets, bioactivities, similarity,
 * drug mechanisms).
 */
import type { SourceModule } from "../source-module.js";
import { chemblSearchActivitiesTool } from "./chembl-activities-tool.js";
import { chemblGetMechanismsTool } from "./chembl-mechanisms-tool.js";
import { chemblSearchMoleculesTool, chemblSearchTargetsTool } from "./chembl-search-tools.js";
import { chemblSimilaritySearchTool } from "./chembl-similarity-tool.js";

/** The `chembl` source module (manifest: manifests/chembl.json). */
export const chemblSource: SourceModule = {
  id: "chembl",
  attribution: "ChEMBL, European Bioinformatics Institute (EMBL-EBI)",
  license: "CC-BY-SA-3.0",
  endpoints: [{ key: "api", defaultBaseUrl: "https://www.ebi.ac.uk/chembl/api/data" }],
  tools: [
    chemblSearchMoleculesTool,
    chemblSearchTargetsTool,
    chemblSearchActivitiesTool,
    chemblSimilaritySearchTool,
    chemblGetMechanismsTool,
  ],
};
