/**
 * ClinVar search hits a scientist can trust: a search NCBI widened says so (the dropped phrase by name, the
 * query NCBI actually ran), and a hit's coordinates say which system they are in (0-based SPDI, 1-based
 * locations), as the VCV and RCV records do. ESearch is NCBI's real answer from
 * ../shared/fixtures/providers/pubmed, edited into the db=clinvar context where named; skipped, visibly,
 * without that folder.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { clinvarSearchVariantsTool } from "../../../src/servers/sources/clinvar/clinvar-search-tools.js";
import type {
  SourceHttp,
  SourceTool,
  SourceToolContext,
} from "../../../src/servers/sources/source-module.js";
import { CLINVAR_FIXTURES } from "../../fixtures/providers/clinvar/routes.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const hasSamples = existsSync(SHARED_PROVIDER_SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SHARED_PROVIDER_SAMPLES} not found)`;

// Edit of NCBI's real ESearch answer for "APC p.E1317Q NOT retracted publication[pt]" (40,362 hits) into the
// answer ClinVar gives when it cannot match p.E1317Q: the real errorlist (phrasesnotfound p.E1317Q) is kept;
// count, idlist, translationset and querytranslation are replaced by ClinVar-shaped ones (two variation ids
// of the project's esummary-library.json, the gene-field translation ClinVar writes for a gene symbol).
function widenedClinvarEsearch(): string {
  const real = JSON.parse(
    readFileSync(
      path.join(SHARED_PROVIDER_SAMPLES, "pubmed", "esearch_json_count40362_retmax100.json"),
      "utf8",
    ),
  );
  const result = real.esearchresult;
  expect(result.errorlist).toEqual({ phrasesnotfound: ["p.E1317Q"], fieldsnotfound: [] });
  Object.assign(result, {
    count: "2",
    retmax: "2",
    idlist: ["900001", "900002"],
    translationset: [],
    querytranslation: "APC[gene]",
  });
  return JSON.stringify(real);
}

function seam(esearch: string): SourceToolContext {
  const esummary = readFileSync(path.join(CLINVAR_FIXTURES, "esummary-library.json"), "utf8");
  const http: SourceHttp = {
    request: async (_endpoint, requestPath) => ({
      status: 200,
      host: "eutils.ncbi.nlm.nih.gov",
      contentType: "application/json",
      text: requestPath.startsWith("/esearch") ? esearch : esummary,
    }),
  };
  return { http, now: () => 0 };
}

describe.skipIf(!hasSamples)(`ClinVar search fidelity${suffix}`, () => {
  test("a search ClinVar widened names the dropped phrase and the query NCBI ran, in warnings and data", async () => {
    const tool = clinvarSearchVariantsTool as unknown as SourceTool;
    const result = await tool.run(
      { query: "APC p.E1317Q", max_results: 20, start: 0 },
      seam(widenedClinvarEsearch()),
    );
    expect(result.records.map((record) => record.identifier)).toEqual(["VCV000900001", "VCV000900002"]);
    expect(result.warnings).toEqual([
      'ClinVar found nothing for "p.E1317Q" and dropped it from the query, so these 2 hit(s) are for a wider ' +
        "search than the one asked. NCBI actually searched: APC[gene]",
    ]);
    expect(result.data).toMatchObject({ droppedPhrases: ["p.E1317Q"], queryTranslation: "APC[gene]" });
  });

  test("a hit's SPDI is labelled 0-based and its locations 1-based, on every assembly, current first", async () => {
    const tool = clinvarSearchVariantsTool as unknown as SourceTool;
    const result = await tool.run(
      { query: "APC p.E1317Q", max_results: 20, start: 0 },
      seam(widenedClinvarEsearch()),
    );
    const data = result.records[0]?.structuredData;
    expect(data).toMatchObject({
      canonicalSpdi0based: "NC_000017.11:43063899:T:C",
      locations: [
        { assembly: "GRCh38", chromosome: "17", start1based: 43063900, stop1based: 43063900 },
        { assembly: "GRCh37", chromosome: "17" },
      ],
      cytogeneticBands: ["17q21.31"],
    });
    expect(data).not.toHaveProperty("canonicalSpdi");
    expect(data).not.toHaveProperty("location");
  });
});
