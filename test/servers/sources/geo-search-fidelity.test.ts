/**
 * A GEO search NCBI widened says so: the dropped phrase by name and the query NCBI actually ran, in the
 * warnings and in data. Runs the real ESearch answer of ../shared/fixtures/providers/pubmed edited into the
 * db=gds context (named below) and the real ESummary of GSE236084; skipped, visibly, without that folder.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { geoSearchStudiesTool } from "../../../src/servers/sources/geo/geo-search-tools.js";
import type {
  SourceHttp,
  SourceTool,
  SourceToolContext,
} from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const hasSamples = existsSync(path.join(SHARED_PROVIDER_SAMPLES, "geo"));
const suffix = hasSamples ? "" : ` (SKIPPED: ${SHARED_PROVIDER_SAMPLES} not found)`;

const sample = (source: string, file: string) =>
  readFileSync(path.join(SHARED_PROVIDER_SAMPLES, source, file), "utf8");

// Edit of NCBI's real ESearch answer for "APC p.E1317Q NOT retracted publication[pt]" into the one db=gds gives
// when it cannot match a phrase: the real errorlist (phrasesnotfound p.E1317Q) is kept; count, idlist and
// querytranslation are replaced by a gds-shaped one (the uid of the real GSE236084 summary, the gse[ETYP]
// filter the tool adds) and the PubMed-only translationset is dropped.
function widenedGdsEsearch(): string {
  const real = JSON.parse(sample("pubmed", "esearch_json_count40362_retmax100.json"));
  const result = real.esearchresult;
  expect(result.errorlist).toEqual({ phrasesnotfound: ["p.E1317Q"], fieldsnotfound: [] });
  Object.assign(result, {
    count: "1",
    retmax: "1",
    idlist: ["200236084"],
    translationset: [],
    querytranslation: '(lung[All Fields] AND metastasis[All Fields]) AND "gse"[Filter]',
  });
  return JSON.stringify(real);
}

describe.skipIf(!hasSamples)(`GEO search fidelity${suffix}`, () => {
  test("a search GEO widened names the dropped phrase and the query NCBI ran, in warnings and data", async () => {
    const esearch = widenedGdsEsearch();
    const esummary = sample("geo", "esummary_gds_json_GSE236084.json");
    const http: SourceHttp = {
      request: async (_endpoint, requestPath) => ({
        status: 200,
        host: "eutils.ncbi.nlm.nih.gov",
        contentType: "application/json",
        text: requestPath.startsWith("/esearch") ? esearch : esummary,
      }),
    };
    const context: SourceToolContext = { http, now: () => 0 };
    const tool = geoSearchStudiesTool as unknown as SourceTool;
    const result = await tool.run({ query: "lung metastasis p.E1317Q", max_results: 20, start: 0 }, context);
    expect(result.records.map((record) => record.identifier)).toEqual(["GSE236084"]);
    expect(result.warnings).toEqual([
      'GEO found nothing for "p.E1317Q" and dropped it from the query, so these 1 hit(s) are for a wider ' +
        'search than the one asked. NCBI actually searched: (lung[All Fields] AND metastasis[All Fields]) AND "gse"[Filter]',
    ]);
    expect(result.data).toMatchObject({
      droppedPhrases: ["p.E1317Q"],
      queryTranslation: '(lung[All Fields] AND metastasis[All Fields]) AND "gse"[Filter]',
    });
  });
});
