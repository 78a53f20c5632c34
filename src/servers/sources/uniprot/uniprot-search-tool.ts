/** `uniprot_search`: the UniProtKB search with cursor paging. */
import { z } from "zod";
import { maxResultsInput, optionalInput, queryInput } from "../input-schemas.js";
import { defineTool } from "../source-module.js";
import { UNIPROT_FIELDS } from "./uniprot-entries.js";
import { parseUniprotResults } from "./uniprot-entry-parser.js";
import { uniprotPaging } from "./uniprot-paging.js";

/** `uniprot_search`: UniProtKB query → protein entry records, with `data.nextCursor` paging. */
export const uniprotSearchTool = defineTool({
  id: "search",
  title: "Search UniProtKB",
  description:
    "Search UniProtKB protein entries (Swiss-Prot reviewed and TrEMBL unreviewed) and return accession, entry " +
    "name, protein and gene names, organism, length, function, PDB and AlphaFold cross-references. Pages with " +
    "max_results and data.nextCursor.",
  inputShape: {
    query: queryInput(
      "UniProt query: words, or fields such as gene:BRAF, protein_name:kinase, organism_id:9606, reviewed:true, " +
        "ec:2.7.11.1, joined with AND, OR, NOT.",
    ),
    max_results: maxResultsInput(10, 100),
    reviewed_only: optionalInput(z.boolean()).describe(
      "Only reviewed UniProtKB/Swiss-Prot entries (default false).",
    ),
    organism_id: optionalInput(z.number().int().min(1)).describe(
      "Only entries of this NCBI taxonomy id (9606 human, 10090 mouse, 559292 yeast).",
    ),
    cursor: optionalInput(z.string().trim().min(1).max(500)).describe(
      "The data.nextCursor of the previous page, to get the next page of the same query.",
    ),
  },
  async run(input, { http }) {
    const clauses = [`(${input.query})`];
    if (input.reviewed_only) clauses.push("(reviewed:true)");
    if (input.organism_id !== undefined) clauses.push(`(organism_id:${input.organism_id})`);
    const response = await http.request("rest", "/uniprotkb/search", {
      query: {
        query: clauses.join(" AND "),
        fields: UNIPROT_FIELDS,
        format: "json",
        size: input.max_results,
        // The reviewed/unreviewed facet counts add up to the total, which the body otherwise lacks.
        facets: "reviewed",
        cursor: input.cursor,
      },
      accept: "application/json",
    });
    const parsed = parseUniprotResults(response);
    const paging = uniprotPaging(response, parsed.facetTotal);
    const returned = parsed.entries.length;
    const warnings: string[] = [];
    let hasMore: boolean;
    if (paging.isCursorKnown) hasMore = paging.nextCursor !== undefined;
    else if (paging.total !== undefined && input.cursor === undefined) hasMore = paging.total > returned;
    else hasMore = returned + parsed.malformed >= input.max_results;
    if (hasMore && paging.nextCursor === undefined) {
      warnings.push(
        "More entries match, but UniProt's next-page cursor could not be read; narrow the query or raise max_results (up to 100).",
      );
    }
    if (parsed.malformed > 0) {
      warnings.push(
        `${parsed.malformed} entry record(s) of the answer had an unexpected shape and were left out.`,
      );
    }
    return {
      records: parsed.entries.map((entry) => entry.record),
      warnings,
      data: {
        ...(paging.total === undefined ? {} : { total: paging.total }),
        returned,
        hasMore,
        ...(paging.nextCursor === undefined ? {} : { nextCursor: paging.nextCursor }),
      },
    };
  },
});
