/** A small, realistic search result: five literature records on the source's allowed host. */
import type { McpRecord, McpToolResult } from "../../src/contract/result-types.js";

/** The host every URL in the result uses; the manifest's `networkHosts` allows exactly this one. */
export const BENCH_HOST = "example.org";

/** Records per result, as a typical first page of a literature search. */
export const RECORDS_PER_RESULT = 5;

function record(query: string, n: number): McpRecord {
  const id = `${query.replace(/\W/g, "").slice(0, 24) || "q"}-${n}`;
  const url = `https://${BENCH_HOST}/records/${id}`;
  return {
    identifier: id,
    identifierType: "pmid",
    title: `Mechanisms of ${query}: a systematic review of cohort ${n}`,
    url,
    source: "bench",
    abstract:
      "Background: we reviewed prospective cohorts. Methods: random-effects meta-analysis of 42 studies. " +
      "Results: a moderate association (OR 1.4, 95% CI 1.2-1.6). Conclusions: further trials are needed.",
    authors: ["Ada Lovelace", "Rosalind Franklin", "Barbara McClintock"],
    year: 2020 + n,
    citations: [{ label: `Lovelace et al. ${2020 + n}`, url, identifier: id, identifierType: "pmid" }],
    primaryCitation: { label: `[bench:${id}](${url})`, url, identifier: id, identifierType: "pmid" },
    contentScope: "abstract",
    crossReferences: [
      { identifier: `10.1000/bench.${id}`, identifierType: "doi", url: `https://${BENCH_HOST}/doi/${id}` },
    ],
    fullTextRetrieved: false,
    peerReviewStatus: "peer-reviewed",
    warnings: [],
  };
}

/**
 * The result a well-behaved server returns for one search.
 * @param toolId the tool that answers (the envelope identity check compares it)
 * @param query the search text; ids and titles derive from it, so distinct queries give distinct bytes
 * @returns an `McpToolResult` with `RECORDS_PER_RESULT` records
 */
export function benchResult(toolId: string, query: string): McpToolResult {
  return {
    records: Array.from({ length: RECORDS_PER_RESULT }, (_, n) => record(query, n + 1)),
    warnings: [],
    attribution: "Bench data",
    license: "CC0-1.0",
    retrievedAt: "2026-01-01T00:00:00.000Z",
    sourceId: "bench",
    toolId,
    untrusted: true,
  };
}
