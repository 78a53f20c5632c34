/**
 * The RCSB calls behind `pdb_search_structures`: a full-text query of the Search API v2 (ids and scores
 * only), then one GraphQL request to the Data API for the hits' descriptions.
 */
import { z } from "zod";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer, SourceHttp } from "../source-module.js";
import { type PdbEntry, parsePdbGraphqlEntries } from "./pdb-entry-parser.js";

/** One page of search hits. */
export interface PdbSearchPage {
  total: number;
  hits: { id: string; score: number | undefined }[];
}

const searchSchema = z.looseObject({
  total_count: z.number().int().min(0),
  result_set: z.array(z.looseObject({ identifier: z.string(), score: z.number().optional() })).default([]),
});

/** The entry fields the records show; the same names as the REST core entry. */
const ENTRIES_QUERY = `query Entries($ids: [String!]!) {
  entries(entry_ids: $ids) {
    rcsb_id
    struct { title }
    struct_keywords { pdbx_keywords }
    exptl { method }
    audit_author { name }
    pdbx_database_status { pdb_format_compatible }
    rcsb_accession_info { deposit_date initial_release_date revision_date }
    rcsb_entry_info { resolution_combined molecular_weight deposited_atom_count polymer_entity_count experimental_method }
    rcsb_primary_citation { title rcsb_journal_abbrev year pdbx_database_id_DOI pdbx_database_id_PubMed }
  }
}`;

/**
 * Runs a full-text entry search.
 * @param http the pdb source's HTTP client
 * @param params the query text and the zero-based page window
 * @returns the total and the page's entry ids with scores
 * @throws ProviderError `invalid_input` (HTTP 400), and the HTTP layer's errors
 */
export async function searchPdbEntries(
  http: SourceHttp,
  params: { query: string; start: number; rows: number },
): Promise<PdbSearchPage> {
  const body = {
    query: { type: "terminal", service: "full_text", parameters: { value: params.query } },
    return_type: "entry",
    request_options: {
      paginate: { start: params.start, rows: params.rows },
      sort: [{ sort_by: "score", direction: "desc" }],
    },
  };
  const response = await http.request("search", "/query", {
    method: "POST",
    body: JSON.stringify(body),
    contentType: "application/json",
    accept: "application/json",
  });
  return parsePdbSearch(response);
}

/**
 * Parses a Search API answer. HTTP 204 with no body is how the API says "no hits".
 * @param answer the JSON body, host and status
 * @returns the total and hits
 * @throws ProviderError `upstream_unavailable` when the body is not a search result
 */
export function parsePdbSearch(answer: ProviderAnswer): PdbSearchPage {
  if (answer.status === 204 || answer.text.trim() === "") return { total: 0, hits: [] };
  const parsed = searchSchema.safeParse(parseJsonBody(answer));
  if (!parsed.success) {
    throw new ProviderError(
      "upstream_unavailable",
      `${answer.host} sent an answer that is not a search result.`,
      {
        status: answer.status,
      },
    );
  }
  return {
    total: parsed.data.total_count,
    hits: parsed.data.result_set.map((hit) => ({ id: hit.identifier.toUpperCase(), score: hit.score })),
  };
}

/**
 * Describes entries with one GraphQL request.
 * @param http the pdb source's HTTP client
 * @param ids entry ids (at most one search page)
 * @returns the entries RCSB described, and how many descriptions were malformed
 * @throws ProviderError `upstream_unavailable` for a GraphQL error answer, and the HTTP layer's errors
 */
export async function describePdbEntries(
  http: SourceHttp,
  ids: readonly string[],
): Promise<{ entries: PdbEntry[]; malformed: number }> {
  if (ids.length === 0) return { entries: [], malformed: 0 };
  const response = await http.request("data", "/graphql", {
    method: "POST",
    body: JSON.stringify({ query: ENTRIES_QUERY, variables: { ids } }),
    contentType: "application/json",
    accept: "application/json",
  });
  return parsePdbGraphqlEntries(response);
}
