/**
 * The Europe PMC parsers over real answers captured in ../shared/fixtures/providers/europepmc (see its
 * README.txt for their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { cursorPaging } from "../../../src/servers/sources/europe-pmc/europe-pmc-client.js";
import { europePmcRecord } from "../../../src/servers/sources/europe-pmc/europe-pmc-record.js";
import {
  europePmcErrorBean,
  parseEuropePmcSearch,
} from "../../../src/servers/sources/europe-pmc/europe-pmc-search-parser.js";
import { isProviderError } from "../../../src/servers/sources/provider-error.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "europepmc");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

describe.skipIf(!hasSamples)(`real Europe PMC samples${suffix}`, () => {
  test("lite search EXT_ID:20516115: one MEDLINE hit with PMCID, DOI, authors from authorString", () => {
    const page = parseEuropePmcSearch(sample("search_lite_pmid_20516115.json"));
    expect(page).toMatchObject({ total: 1, skipped: 0, nextCursor: undefined });
    const [hit] = page.hits;
    expect(hit).toMatchObject({
      id: "20516115",
      source: "MED",
      pmid: "20516115",
      pmcid: "PMC3040717",
      doi: "10.1158/0008-5472.can-09-4563",
      year: 2010,
      journal: "Cancer Res",
      volume: "70",
      issue: "12",
      pages: "4880-4890",
      isOpenAccess: false,
      inPMC: true,
      hasPDF: true,
      abstract: undefined,
    });
    expect(hit?.authors).toHaveLength(11);
    expect([hit?.authors[0], hit?.authors.at(-1)]).toEqual(["Lee MS", "Glover JN"]);
    expect(hit?.publicationTypes).toContain("journal article");
    const record = europePmcRecord(hit!);
    expect(record).toMatchObject({
      identifier: "20516115",
      identifierType: "pmid",
      url: "https://europepmc.org/article/MED/20516115",
      contentScope: "metadata",
      peerReviewStatus: "peer-reviewed",
      crossReferences: [
        { identifier: "10.1158/0008-5472.can-09-4563", identifierType: "doi" },
        { identifier: "PMC3040717", identifierType: "pmcid" },
      ],
    });
  });

  test("lite search of six hits: MEDLINE and PMC-only records, open-access flags, HTTPS URLs on manifest hosts", () => {
    const page = parseEuropePmcSearch(sample("search_lite_multi.json"));
    expect(page.total).toBe(6);
    const records = page.hits.map(europePmcRecord);
    expect(records.map((r) => [r.identifier, r.identifierType])).toEqual([
      ["36457512", "pmid"],
      ["32081490", "pmid"],
      ["29887214", "pmid"],
      ["19493351", "pmid"],
      ["19142183", "pmid"],
      ["PMC11627200", "pmcid"],
    ]);
    expect(page.hits.map((h) => h.isOpenAccess)).toEqual([true, false, false, true, true, false]);
    // A meeting-abstract supplement is not peer-reviewed research.
    expect(records.at(-1)?.peerReviewStatus).toBe("unknown");
    const hosts = readManifest("europe-pmc").governance.networkHosts;
    for (const url of resultUrls({ records })) {
      expect(new URL(url).protocol).toBe("https:");
      expect(hosts).toContain(new URL(url).hostname);
    }
    expect(cursorPaging(page, { query: "q", pageSize: 25 }, records.length)).toEqual({
      total: 6,
      returned: 6,
      cursor: "*",
      hasMore: false,
    });
  });

  test("the errorBean of a non-open-access article is not_open_access, also where JSON was expected", () => {
    const answer = sample("error_supplementaryFiles_not_open_access.xml");
    expect(europePmcErrorBean(answer)).toMatchObject({ code: "not_open_access", status: 200 });
    let thrown: unknown;
    try {
      parseEuropePmcSearch(answer);
    } catch (error) {
      thrown = error;
    }
    expect(isProviderError(thrown) && thrown.code).toBe("not_open_access");
  });
});
