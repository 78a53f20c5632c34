/** Fetching PubMed articles by PMID, shared by the PubMed tools. */
import type { McpRecord } from "../../../contract/index.js";
import { efetch } from "../ncbi/eutils.js";
import type { SourceHttp } from "../source-module.js";
import { parsePubmedArticles } from "./pubmed-article-parser.js";

/** The records of requested PMIDs, split into found and missing. */
export interface FetchedArticles {
  /** Records in the order of the requested PMIDs. */
  records: McpRecord[];
  /** Requested PMIDs PubMed returned no record for. */
  missing: string[];
}

/**
 * Fetches PubMed records (title, abstract, authors, identifiers) with one EFetch.
 * @param http the pubmed source's HTTP client
 * @param pmids normalized, distinct PMIDs (at most 200)
 * @returns found records in request order, and the missing PMIDs
 * @throws ProviderError from the HTTP layer or a malformed answer
 */
export async function fetchPubmedArticles(
  http: SourceHttp,
  pmids: readonly string[],
): Promise<FetchedArticles> {
  if (pmids.length === 0) return { records: [], missing: [] };
  const response = await efetch(http, "pubmed", pmids, "abstract");
  const byId = new Map(parsePubmedArticles(response).map((r) => [r.identifier, r]));
  const records: McpRecord[] = [];
  const missing: string[] = [];
  for (const pmid of pmids) {
    const record = byId.get(pmid);
    if (record) records.push(record);
    else missing.push(pmid);
  }
  return { records, missing };
}
