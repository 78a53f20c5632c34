/** Fetching UniProtKB entries by accession, shared by the `lookup` and `prepare_sequence` tools. */
import type { SourceHttp } from "../source-module.js";
import { parseUniprotResults, type UniprotEntries } from "./uniprot-entry-parser.js";

/**
 * The entry sections every UniProt tool asks for: a whole entry is tens to hundreds of kB, so answers are
 * kept to what the records show (https://www.uniprot.org/help/return_fields).
 */
export const UNIPROT_FIELDS = [
  "accession",
  "id",
  "reviewed",
  "protein_name",
  "gene_names",
  "organism_name",
  "organism_id",
  "length",
  "cc_function",
  "protein_existence",
  "annotation_score",
  "version",
  "sequence_version",
  // What the length is the length of: isoforms, and the precursor's processing (./uniprot-sequence.ts).
  "cc_alternative_products",
  "ft_signal",
  "ft_transit",
  "ft_propep",
  "ft_init_met",
  "ft_chain",
  "ft_peptide",
  "date_modified",
  "xref_pdb",
  "xref_alphafolddb",
].join(",");

/**
 * Fetches entries with one `/uniprotkb/accessions` request.
 * @param http the uniprot source's HTTP client
 * @param accessions distinct canonical accessions (at most 50)
 * @returns the active entries, inactive accessions and malformed count (absent accessions are simply missing)
 * @throws ProviderError from the HTTP layer or a malformed answer
 */
export async function fetchUniprotEntries(
  http: SourceHttp,
  accessions: readonly string[],
): Promise<UniprotEntries> {
  const response = await http.request("rest", "/uniprotkb/accessions", {
    query: {
      accessions: accessions.join(","),
      fields: UNIPROT_FIELDS,
      format: "json",
      size: accessions.length,
    },
    accept: "application/json",
  });
  return parseUniprotResults(response);
}
