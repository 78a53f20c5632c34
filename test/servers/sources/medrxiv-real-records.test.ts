/**
 * Real medRxiv records: the 18 records of test/fixtures/providers/medrxiv/real (see its SOURCES.md: real
 * `details/medrxiv` records of June 2019 as the R client medrxivr stored them, without the API's envelope,
 * `type` and `server`). Each test puts the array back into the API's envelope
 * (`{"messages":[{"status":"ok"}],"collection":[...]}`); that wrapper is the only edit.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parsePreprintDetails } from "../../../src/servers/sources/biorxiv/preprint-details-parser.js";
import { normalizePreprintDoi } from "../../../src/servers/sources/biorxiv/preprint-dois.js";
import { preprintVersionRecord } from "../../../src/servers/sources/biorxiv/preprint-record.js";
import {
  MEDRXIV,
  preprintPageUrl,
  preprintPdfUrl,
} from "../../../src/servers/sources/biorxiv/preprint-server.js";
import { MEDRXIV_FIXTURES } from "../../fixtures/providers/medrxiv/routes.js";
import {
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  resultUrls,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SAMPLE = path.join(MEDRXIV_FIXTURES, "real", "medrxiv_2019-01-01_2019-06-25.medrxivr.json");
const records: Record<string, unknown>[] = JSON.parse(readFileSync(SAMPLE, "utf8"));
const envelope = (items: readonly unknown[]) =>
  JSON.stringify({ messages: [{ status: "ok" }], collection: items });
const details = () => parsePreprintDetails({ text: envelope(records), host: "sample", status: 200 });

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("real medRxiv records (June 2019, stored by medrxivr)", () => {
  test("all 18 records parse, with the first one's fields as the API gave them", () => {
    const { found, versions } = details();
    expect(found).toBe(true);
    expect(versions).toHaveLength(18);
    expect(versions[0]).toEqual({
      doi: "10.1101/19000109",
      version: 1,
      title:
        "Molecular profiling of neonatal dried blood spots reveals changes in innate and adaptive immunity " +
        "following fetal inflammatory response",
      authors: [
        "Daniel Costa",
        "Nuria Bonet",
        "Amanda Sole",
        "Jose Manuel Gonzalez De Aledo-Castillo",
        "Eduard Sabido",
        "Ferran Casals",
        "Carlota Rovira",
        "Alfons Nadal",
        "Jose Luis Marin",
        "Teresa Cobo",
        "Robert Castelo",
      ],
      date: "2019-06-25",
      type: undefined,
      license: "cc_by",
      category: "Genetic And Genomic Medicine",
      abstract: expect.stringMatching(
        /^The fetal inflammatory response \(FIR\) increases the risk .* brain injury\.$/,
      ),
      server: undefined,
      publishedDoi: "10.1111/febs.15578",
      jatsXml: "https://www.medrxiv.org/content/early/2019/06/25/19000109.source.xml",
      correspondingAuthor: "Robert Castelo",
      correspondingInstitution: expect.stringMatching(/^Department of Experimental and Health Sciences/),
    });
  });

  test("records are medRxiv records on manifest hosts, 15 of 18 naming their journal version", () => {
    const built = details().versions.map((v) => preprintVersionRecord(MEDRXIV, v, [v.version]));
    const hosts = readManifest("medrxiv").governance.networkHosts;
    for (const url of resultUrls({ records: built })) expect(hosts).toContain(new URL(url).hostname);
    expect(built[0]).toMatchObject({
      source: "medrxiv",
      url: "https://www.medrxiv.org/content/10.1101/19000109",
      primaryCitation: {
        label: "[medRxiv:10.1101/19000109v1](https://www.medrxiv.org/content/10.1101/19000109v1)",
      },
      peerReviewStatus: "preprint",
      year: 2019,
      structuredData: { server: "medRxiv", license: "CC-BY-4.0", publishedDoi: "10.1111/febs.15578" },
    });
    const published = built.filter((r) =>
      r.crossReferences.some((x) => x.identifierType === "published-doi"),
    );
    expect(published).toHaveLength(15);
    const licences = new Set(built.map((r) => r.structuredData?.license));
    expect([...licences].sort()).toEqual([
      "All rights reserved (no reuse without permission)",
      "CC-BY-4.0",
      "CC-BY-NC-4.0",
      "CC-BY-NC-ND-4.0",
      "CC0-1.0",
    ]);
    // medrxivr dropped `type`: no article type is invented.
    expect(built[0]?.structuredData).not.toHaveProperty("articleType");
  });

  test("the eight-digit DOIs of 2019 (10.1101/19000109) and their page URLs are medRxiv DOIs", () => {
    for (const record of records) {
      const doi = String(record.doi);
      expect(normalizePreprintDoi(doi), doi).toEqual({ doi });
      expect(normalizePreprintDoi(String(record.link_pdf)), String(record.link_pdf)).toEqual({
        doi,
        version: 1,
      });
      // The PDF and versioned page medrxivr built for each record are the ones the source builds.
      expect(preprintPdfUrl(MEDRXIV, doi, 1)).toBe(record.link_pdf);
      expect(`${preprintPageUrl(MEDRXIV, doi, 1)}?versioned=TRUE`).toBe(record.link_page);
    }
  });

  test("medrxiv_lookup_doi finds a 2019 preprint by its eight-digit DOI", async () => {
    // Edited: only the first record, in the envelope; /pubs answers "no posts found" (no real sample).
    const doi = "10.1101/19000109";
    const json = { "content-type": "application/json" };
    h = await startSourcesHarness(
      [
        {
          path: `/medrxiv/api/details/medrxiv/${doi}/na/json`,
          body: envelope(records.slice(0, 1)),
          headers: json,
        },
        {
          path: `/medrxiv/api/pubs/medrxiv/${doi}/na/json`,
          file: path.join(MEDRXIV_FIXTURES, "details-no-posts.json"),
        },
      ],
      { only: ["medrxiv"] },
    );
    const result = okResult(
      await h.call("medrxiv_lookup_doi", { doi: `https://www.medrxiv.org/content/${doi}v1` }),
    );
    expect(result.records[0]).toMatchObject({
      identifier: doi,
      structuredData: { publishedDoi: "10.1111/febs.15578", licenseCode: "cc_by" },
    });
    expect(result.records[0]?.warnings).toEqual([
      "A journal version of this preprint was published as doi:10.1111/febs.15578; prefer citing the published version.",
    ]);
    expectUrlsOnManifestHosts(result, "medrxiv");
  });
});
