/**
 * The Reactome parsers over real ContentService answers captured (and reduced by their origin) in
 * ../shared/fixtures/providers/reactome (see README.txt there). Skipped, visibly, when that folder is not
 * next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  parseReactomeEvent,
  parseReactomeSearch,
} from "../../../src/servers/sources/reactome/reactome-content-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "reactome");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

describe.skipIf(!hasSamples)(`real Reactome samples${suffix}`, () => {
  test("search/query: ten pathway hits with the highlighting removed and no invented total", () => {
    const page = parseReactomeSearch(sample("search_query_REDUCED.json"));
    expect(page.total).toBeUndefined();
    expect(page.skipped).toBe(0);
    expect(page.records).toHaveLength(10);
    expect(page.records.slice(0, 3).map((r) => [r.identifier, r.title])).toEqual([
      ["R-HSA-9652817", "Signaling by MAPK mutants"],
      ["R-HSA-6802957", "Oncogenic MAPK signaling"],
      ["R-HSA-168638", "NOD1/2 Signaling Pathway"],
    ]);
    for (const record of page.records) {
      expect(record.title).not.toMatch(/[<>]/);
      expect(record.contentScope).toBe("metadata");
    }
    const hosts = readManifest("reactome").governance.networkHosts;
    for (const url of resultUrls({ records: page.records })) expect(hosts).toContain(new URL(url).hostname);
  });

  test("data/query/R-HSA-5673001: the pathway with its summary split at <br>", () => {
    const record = parseReactomeEvent(sample("data_query_R-HSA-5673001_REDUCED.json"));
    expect(record).toMatchObject({
      identifier: "R-HSA-5673001",
      title: "RAF/MAP kinase cascade",
      url: "https://reactome.org/content/detail/R-HSA-5673001",
      contentScope: "structured-record",
      primaryCitation: {
        label: "[Reactome:R-HSA-5673001](https://reactome.org/content/detail/R-HSA-5673001)",
      },
      structuredData: { species: "Homo sapiens" },
    });
    const summary = String(record.structuredData?.summary);
    expect(summary.split("\n\n")).toHaveLength(2);
    expect(summary).toMatch(/^The RAS-RAF-MEK-ERK pathway regulates processes/);
    expect(summary).toContain("(reviewed in Cseh et al, 2014; Roskoski, 2010;");
    expect(summary).not.toContain("<br>");
    expect(summary).not.toContain("  ");
  });
});
