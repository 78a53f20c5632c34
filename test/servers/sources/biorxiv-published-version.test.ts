/**
 * The published journal version of a bioRxiv preprint: `details` gives only its DOI; the API's `/pubs`
 * endpoint gives the journal and the publication date. Runs over the real answers in
 * ../shared/fixtures/providers/biorxiv (see its README.txt; both interval samples were truncated by their
 * author to one record); skipped, visibly, when that folder is absent.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parsePreprintPublications } from "../../../src/servers/sources/biorxiv/preprint-pubs-parser.js";
import type { FakeRoute } from "../../../src/testing/fake-provider-server.js";
import {
  expectUrlsOnManifestHosts,
  okResult,
  SHARED_PROVIDER_SAMPLES,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "biorxiv");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;
const read = (file: string) => readFileSync(path.join(SAMPLES, file), "utf8");

/** The preprint of the real `/pubs` sample and the journal DOI that sample gives for it. */
const PREPRINT = "10.1101/2025.09.17.676679";
const JOURNAL_DOI = "10.1091/mbc.E25-09-0454";
const DETAILS = `/biorxiv/api/details/biorxiv/${PREPRINT}/na/json`;
const PUBS = `/biorxiv/api/pubs/biorxiv/${PREPRINT}/na/json`;

/**
 * The real `details` sample, edited to describe the preprint of the real `/pubs` sample: its `doi` becomes
 * that preprint's DOI and its `published` ("NA") that preprint's journal DOI, as `details` writes it for a
 * published preprint. Everything else (title, authors, dates) stays the real record of another preprint.
 */
function editedDetails(): string {
  return read("details_interval_TRUNCATED_FROM_DOC.json")
    .replace('"doi":"10.64898/2026.07.31.741992"', `"doi":"${PREPRINT}"`)
    .replace('"published":"NA"', `"published":"${JOURNAL_DOI}"`);
}

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function harness(details: string, pubs?: string): Promise<SourcesHarness> {
  const json = { "content-type": "application/json" };
  const routes: FakeRoute[] = [{ path: DETAILS, body: details, headers: json }];
  if (pubs !== undefined) routes.push({ path: PUBS, body: pubs, headers: json });
  h = await startSourcesHarness(routes, { only: ["biorxiv"] });
  return h;
}

describe.skipIf(!hasSamples)(`bioRxiv published versions on real samples${suffix}`, () => {
  test("the /pubs sample parses into preprint DOI, journal DOI, journal and publication date", () => {
    const answer = { text: read("pubs_interval_TRUNCATED_FROM_DOC.json"), host: "sample", status: 200 };
    expect(parsePreprintPublications(answer)).toEqual([
      {
        preprintDoi: PREPRINT,
        publishedDoi: JOURNAL_DOI,
        journal: "Molecular Biology of the Cell",
        publishedDate: "2026-06-01",
        preprintPlatform: "bioRxiv",
      },
    ]);
    const none = { text: read("details_no_posts_found.json"), host: "sample", status: 200 };
    expect(parsePreprintPublications(none)).toEqual([]);
  });

  test("lookup_doi of a published preprint fetches /pubs once and carries journal and date", async () => {
    const s = await harness(editedDetails(), read("pubs_interval_TRUNCATED_FROM_DOC.json"));
    const result = okResult(await s.call("biorxiv_lookup_doi", { doi: PREPRINT }));
    expect(s.provider.requests.map((r) => r.path)).toEqual([DETAILS, PUBS]);
    const [record] = result.records;
    expect(record?.crossReferences).toEqual([
      { identifier: PREPRINT, identifierType: "doi", url: `https://doi.org/${PREPRINT}` },
      { identifier: JOURNAL_DOI, identifierType: "published-doi", url: `https://doi.org/${JOURNAL_DOI}` },
    ]);
    expect(record?.structuredData).toMatchObject({
      publishedDoi: JOURNAL_DOI,
      publishedJournal: "Molecular Biology of the Cell",
      publishedDate: "2026-06-01",
    });
    expect(record?.warnings).toEqual([
      `A journal version of this preprint was published as doi:${JOURNAL_DOI} in Molecular Biology of the ` +
        "Cell on 2026-06-01; prefer citing the published version.",
    ]);
    expect(result.warnings).toEqual([]);
    expectUrlsOnManifestHosts(result, "biorxiv");
  });

  test("a failed /pubs request keeps the preprint record and says what is missing", async () => {
    const s = await harness(editedDetails(), read("pubs_interval_TRUNCATED_FROM_DOC.json"));
    s.provider.setFault({ path: PUBS }, { status: 503 });
    const result = okResult(await s.call("biorxiv_lookup_doi", { doi: PREPRINT }));
    expect(s.provider.requests.map((r) => r.path)).toEqual([DETAILS, PUBS]);
    const [record] = result.records;
    expect(record).toMatchObject({
      identifier: PREPRINT,
      title: "Sound-shape correspondences in macaques reveal evolutionary roots of sound symbolism",
      structuredData: { publishedDoi: JOURNAL_DOI },
    });
    expect(record?.structuredData).not.toHaveProperty("publishedJournal");
    expect(record?.warnings).toEqual([
      `A journal version of this preprint was published as doi:${JOURNAL_DOI}; prefer citing the published ` +
        "version.",
      "The journal and date of the published version could not be fetched from the bioRxiv API's /pubs endpoint " +
        "(HTTP 503); the preprint record itself is complete.",
    ]);
  });

  test("edited /pubs naming another journal DOI: no journal or date is borrowed, and the record says so", async () => {
    // Edited: the real /pubs sample's published_doi changed (one digit) so that it disagrees with details.
    const pubs = read("pubs_interval_TRUNCATED_FROM_DOC.json").replace(
      JOURNAL_DOI,
      "10.1091/mbc.E25-09-0455",
    );
    const s = await harness(editedDetails(), pubs);
    const [record] = okResult(await s.call("biorxiv_lookup_doi", { doi: PREPRINT })).records;
    expect(record?.structuredData).not.toHaveProperty("publishedJournal");
    expect(record?.warnings[1]).toBe(
      `bioRxiv's /pubs endpoint names doi:10.1091/mbc.E25-09-0455 as the published version, its details ` +
        `doi:${JOURNAL_DOI}; check which one is the journal version before citing.`,
    );
  });

  test("a preprint without a published DOI costs no /pubs request", async () => {
    const s = await harness(
      read("details_interval_TRUNCATED_FROM_DOC.json").replace(
        '"doi":"10.64898/2026.07.31.741992"',
        `"doi":"${PREPRINT}"`,
      ),
    );
    const result = okResult(await s.call("biorxiv_lookup_doi", { doi: PREPRINT }));
    expect(s.provider.requests.map((r) => r.path)).toEqual([DETAILS]);
    expect(result.records[0]?.warnings).toEqual([]);
    expect(result.records[0]?.structuredData).not.toHaveProperty("publishedDoi");
  });
});
