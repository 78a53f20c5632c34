/** `europe-pmc_search`: Europe PMC search with abstracts and cursor paging. */
import { z } from "zod";
import { maxResultsInput, optionalInput, queryInput, sortInput } from "../input-schemas.js";
import { defineTool } from "../source-module.js";
import { cursorPaging, searchEuropePmc } from "./europe-pmc-client.js";
import { europePmcRecord } from "./europe-pmc-record.js";

/**
 * The `cursor` input of cursor-paged searches.
 * @returns the schema (optional; blank means the first page)
 */
export function cursorInput() {
  return optionalInput(z.string().trim().min(1).max(500)).describe(
    "Paging cursor: pass data.nextCursor of the previous page; omit for the first page.",
  );
}

/** `europe-pmc_search`: one page of Europe PMC hits (MEDLINE, PMC, preprints, ...) with abstracts. */
export const europePmcSearchTool = defineTool({
  id: "search",
  title: "Search Europe PMC",
  description:
    "Search Europe PMC (PubMed/MEDLINE, PubMed Central, preprints, patents, Agricola) and return the hits with " +
    "title, authors, journal, year, abstract, DOI, PMID/PMCID and open-access status. Pages with a cursor: pass " +
    "data.nextCursor as cursor.",
  inputShape: {
    query: queryInput(
      'Europe PMC query: words, "phrases", or fields such as TITLE:, AUTH:, JOURNAL:, PUB_YEAR:[2020 TO 2024], ' +
        "SRC:MED, SRC:PPR (preprints), OPEN_ACCESS:y; AND, OR, NOT.",
    ),
    max_results: maxResultsInput(10, 100),
    cursor: cursorInput(),
    sort: sortInput,
  },
  async run(input, { http }) {
    const params = {
      query: input.query,
      pageSize: input.max_results,
      cursor: input.cursor,
      sort: input.sort,
    };
    const page = await searchEuropePmc(http, "rest", params);
    const records = page.hits.map(europePmcRecord);
    const warnings: string[] = [];
    if (page.skipped > 0) warnings.push(`${page.skipped} hit(s) had no Europe PMC id and are left out.`);
    return { records, warnings, data: { ...cursorPaging(page, params, records.length) } };
  },
});
