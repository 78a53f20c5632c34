/** `chembl_similarity_search`: compounds structurally similar to a SMILES, InChIKey or ChEMBL compound. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { defaultedInput, maxResultsInput, startInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { type ChemblStructure, parseChemblStructure } from "./chembl-ids.js";
import { chemblMoleculeRecord } from "./chembl-molecule-parser.js";
import { CHEMBL_API, pagingData, parseChemblPage } from "./chembl-page.js";

const STRUCTURE_FORMS =
  "a SMILES string, a standard InChIKey or a ChEMBL compound id (CHEMBL25 or a ChEMBL page URL)";

/** `chembl_similarity_search`: Tanimoto similarity search over ChEMBL compounds, most similar first. */
export const chemblSimilaritySearchTool = defineTool({
  id: "similarity_search",
  title: "ChEMBL similarity search",
  description:
    "Find ChEMBL compounds structurally similar to a query structure (SMILES, InChIKey or ChEMBL compound id) " +
    "at or above a Tanimoto similarity threshold of 40-100 percent, most similar first. Returns molecule " +
    "records with their similarity. Pages with start/max_results.",
  inputShape: {
    structure: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .describe(
        "The query structure: SMILES (CC(=O)Oc1ccccc1C(=O)O), InChIKey, or ChEMBL compound id (CHEMBL25).",
      ),
    threshold: defaultedInput(z.number().int().min(40).max(100), 70).describe(
      "Minimum Tanimoto similarity in percent (40-100, default 70).",
    ),
    max_results: maxResultsInput(10, 100),
    start: startInput(9999),
  },
  async run(input, { http }) {
    const structure = parseChemblStructure(input.structure) ?? invalidId(input.structure, STRUCTURE_FORMS);
    const start = input.start ?? 0;
    const { path, query } = similarityRequest(structure, input.threshold);
    // ChEMBL rejects a structure it cannot parse (or an id that is not a compound) with HTTP 400.
    const response = await http.request(CHEMBL_API, path, {
      query: { ...query, limit: input.max_results, offset: start },
      accept: "application/json",
      acceptStatuses: [400],
    });
    if (response.status === 400) {
      throw new ProviderError("invalid_id", `ChEMBL could not use the structure as ${STRUCTURE_FORMS}.`, {
        status: 400,
      });
    }
    const page = parseChemblPage(response, "molecules");
    const records = page.items.flatMap((item) => chemblMoleculeRecord(item) ?? []);
    const warnings: string[] = [];
    const dropped = page.items.length - records.length;
    if (dropped > 0) warnings.push(`${dropped} ChEMBL result(s) without a valid ChEMBL id were left out.`);
    return {
      records,
      warnings,
      data: { ...pagingData(page, start, 10_000), threshold: input.threshold, structureType: structure.type },
    };
  },
});

/**
 * Ids and InChIKeys go in the documented path form (`/similarity/CHEMBL25/70.json`). A SMILES goes in the
 * query (`/similarity.json?smiles=…&similarity=70`), as ChEMBL's own client sends it: SMILES may contain `/`,
 * which a path segment cannot carry.
 */
function similarityRequest(
  structure: ChemblStructure,
  threshold: number,
): { path: string; query: Record<string, string | number> } {
  if (structure.type === "smiles") {
    return { path: "/similarity.json", query: { smiles: structure.value, similarity: threshold } };
  }
  return { path: `/similarity/${structure.value}/${threshold}.json`, query: {} };
}
