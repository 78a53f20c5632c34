/**
 * `<server>_search_preprints`: keyword search of bioRxiv or medRxiv preprints. The bioRxiv/medRxiv API has
 * no keyword search (only date windows), so this goes through Europe PMC's preprint index, filtered to the
 * server, and says so in a warning.
 */
import type { McpRecord } from "../../../contract/index.js";
import { cursorPaging, searchEuropePmc } from "../europe-pmc/europe-pmc-client.js";
import { cursorInput } from "../europe-pmc/europe-pmc-search-tool.js";
import { maxResultsInput, queryInput, sortInput } from "../input-schemas.js";
import { type AnySourceTool, defineTool } from "../source-module.js";
import { europePmcPreprintRecord } from "./preprint-record.js";
import type { PreprintServer } from "./preprint-server.js";

/**
 * The Europe PMC query that restricts a user query to one server's preprints.
 * @param server the preprint server
 * @param query the user's query (Europe PMC syntax)
 * @returns `(<query>) AND SRC:PPR AND PUBLISHER:"bioRxiv"`
 */
export function preprintQuery(server: PreprintServer, query: string): string {
  return `(${query}) AND SRC:PPR AND PUBLISHER:"${server.name}"`;
}

/**
 * Creates the `search_preprints` tool of one server.
 * @param server the preprint server
 * @returns the tool
 */
export function createPreprintSearchTool(server: PreprintServer): AnySourceTool {
  return defineTool({
    id: "search_preprints",
    title: `Search ${server.name} preprints`,
    description:
      `Search ${server.name} preprints (${server.subject}) by keywords and return title, authors, posting date, ` +
      `abstract and DOI. The ${server.name} API has no keyword search, so this searches Europe PMC's preprint ` +
      "index restricted to the server. Pages with a cursor: pass data.nextCursor as cursor.",
    inputShape: {
      query: queryInput(
        'Keywords or "phrases"; Europe PMC fields work, e.g. TITLE:, AUTH:, ABSTRACT:, FIRST_PDATE:[2024-01-01 TO ' +
          "2024-12-31]; AND, OR, NOT.",
      ),
      max_results: maxResultsInput(10, 100),
      cursor: cursorInput(),
      sort: sortInput,
    },
    async run(input, { http }) {
      const params = {
        query: preprintQuery(server, input.query),
        pageSize: input.max_results,
        cursor: input.cursor,
        sort: input.sort,
      };
      const page = await searchEuropePmc(http, "europe-pmc", params);
      const records: McpRecord[] = [];
      let dropped = page.skipped;
      for (const hit of page.hits) {
        const record = europePmcPreprintRecord(server, hit);
        if (!record) dropped++;
        else if (!records.some((r) => r.identifier === record.identifier)) records.push(record);
      }
      const warnings = [
        `${server.name}'s API has no keyword search: these hits come from Europe PMC's preprint index ` +
          `(SRC:PPR, PUBLISHER:"${server.name}"), which can lag ${server.name} by a few days. ` +
          `Use ${server.id}_lookup_doi for the version history of a hit.`,
      ];
      if (dropped > 0) {
        warnings.push(`${dropped} hit(s) were not ${server.name} preprints with a DOI and are left out.`);
      }
      return {
        records,
        warnings,
        data: { ...cursorPaging(page, params, records.length), searchedVia: "europe-pmc" },
      };
    },
  });
}
