/** The ChEMBL keyword searches: `search_molecules` and `search_targets`. */
import { z } from "zod";
import type { McpRecord } from "../../../contract/index.js";
import { maxResultsInput, optionalInput, queryInput, startInput } from "../input-schemas.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool, type ToolOutput } from "../source-module.js";
import { chemblMoleculeRecord } from "./chembl-molecule-parser.js";
import { type ChemblItem, fetchChemblPage, pagingData } from "./chembl-page.js";
import { chemblTargetRecord } from "./chembl-target-parser.js";

/** The searches page through the first 10,000 hits; a narrower query serves better than deeper pages. */
export const CHEMBL_SEARCH_MAX_REACHABLE = 10_000;

/** `chembl_search_molecules`: ChEMBL's full-text molecule search (names, synonyms, trade names, ids). */
export const chemblSearchMoleculesTool = defineTool({
  id: "search_molecules",
  title: "Search ChEMBL molecules",
  description:
    "Search ChEMBL compounds and drugs by name, synonym, trade name, research code or ChEMBL id and return " +
    "structured records: preferred name, synonyms, max development phase, formula, molecular weight, " +
    "drug-likeness properties, canonical SMILES and InChIKey. Pages with start/max_results.",
  inputShape: {
    query: queryInput("Words to search molecule names and synonyms, e.g. imatinib, Gleevec or STI-571."),
    max_results: maxResultsInput(10, 100),
    start: startInput(CHEMBL_SEARCH_MAX_REACHABLE - 1),
  },
  run: (input, { http }) =>
    searchResource(http, "/molecule/search.json", "molecules", chemblMoleculeRecord, {
      q: input.query,
      limit: input.max_results,
      offset: input.start ?? 0,
    }),
});

/** `chembl_search_targets`: ChEMBL's full-text target search, optionally in one organism. */
export const chemblSearchTargetsTool = defineTool({
  id: "search_targets",
  title: "Search ChEMBL targets",
  description:
    "Search ChEMBL drug targets (proteins, complexes, protein families, cell lines, organisms) by name, gene " +
    "symbol or UniProt accession, optionally in one organism, and return structured records: preferred name, " +
    "target type, organism, components with UniProt accessions and gene symbols. Pages with start/max_results.",
  inputShape: {
    query: queryInput("Words to search target names and synonyms, e.g. EGFR, cyclooxygenase or P00533."),
    organism: optionalInput(z.string().trim().min(1).max(200)).describe(
      "Only targets of this organism, by its scientific name (e.g. Homo sapiens, Mus musculus).",
    ),
    max_results: maxResultsInput(10, 100),
    start: startInput(CHEMBL_SEARCH_MAX_REACHABLE - 1),
  },
  run: (input, { http }) =>
    searchResource(http, "/target/search.json", "targets", chemblTargetRecord, {
      q: input.query,
      // ChEMBL applies list filters on top of a search; iexact so that "homo sapiens" matches too.
      organism__iexact: input.organism,
      limit: input.max_results,
      offset: input.start ?? 0,
    }),
});

async function searchResource(
  http: SourceHttp,
  path: string,
  listKey: string,
  toRecord: (item: ChemblItem) => McpRecord | undefined,
  query: { offset: number } & Record<string, string | number | undefined>,
): Promise<ToolOutput> {
  const page = await fetchChemblPage(http, path, listKey, { query });
  const records = page.items.flatMap((item) => toRecord(item) ?? []);
  const warnings: string[] = [];
  const dropped = page.items.length - records.length;
  if (dropped > 0) warnings.push(`${dropped} ChEMBL result(s) without a valid ChEMBL id were left out.`);
  return {
    records,
    warnings,
    data: pagingData(page, query.offset, CHEMBL_SEARCH_MAX_REACHABLE),
  };
}
