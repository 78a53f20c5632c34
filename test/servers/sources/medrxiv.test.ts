import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { MEDRXIV_FIXTURE_QUERY, medrxivFakeRoutes } from "../../fixtures/providers/medrxiv/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const DOI = "10.1101/2020.09.09.20191205";
const DETAILS = `/medrxiv/api/details/medrxiv/${DOI}/na/json`;
const SEARCH = "/medrxiv/europe-pmc/search";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(medrxivFakeRoutes(), { only: ["medrxiv"] });
});
afterEach(() => h.close());

describe("medrxiv_search_preprints", () => {
  test("filters Europe PMC to medRxiv and keeps only medRxiv preprints", async () => {
    const result = okResult(await h.call("medrxiv_search_preprints", { query: MEDRXIV_FIXTURE_QUERY }));
    expect(h.provider.requests[0]?.query.query).toBe(
      `(${MEDRXIV_FIXTURE_QUERY}) AND SRC:PPR AND PUBLISHER:"medRxiv"`,
    );
    expect(result).toMatchObject({
      sourceId: "medrxiv",
      toolId: "search_preprints",
      attribution: readManifest("medrxiv").governance.attribution,
      data: { total: 2, returned: 1, hasMore: false, searchedVia: "europe-pmc" },
    });
    expect(result.records.map((r) => [r.identifier, r.url, r.peerReviewStatus])).toEqual([
      [DOI, `https://www.medrxiv.org/content/${DOI}`, "preprint"],
    ]);
    expect(result.warnings[0]).toMatch(/^medRxiv's API has no keyword search/);
    expect(result.warnings[1]).toMatch(/^1 hit\(s\) were not medRxiv preprints/);
    expectUrlsOnManifestHosts(result, "medrxiv");
  });

  test("an empty result is a success with total 0", async () => {
    const result = okResult(await h.call("medrxiv_search_preprints", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toMatchObject({ total: 0, returned: 0, hasMore: false });
  });

  test("429 then success", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "1" });
    expect(errorOf(await h.call("medrxiv_search_preprints", { query: MEDRXIV_FIXTURE_QUERY }))).toMatchObject(
      {
        code: "rate_limited",
        retryAfterMs: 1000,
      },
    );
    expect(
      okResult(await h.call("medrxiv_search_preprints", { query: MEDRXIV_FIXTURE_QUERY })).records,
    ).toHaveLength(1);
  });
});

describe("medrxiv_lookup_doi", () => {
  test("returns the medRxiv record of the latest version, cited on www.medrxiv.org", async () => {
    const result = okResult(
      await h.call("medrxiv_lookup_doi", { doi: `https://www.medrxiv.org/content/${DOI}v2` }),
    );
    expect(h.provider.requests.map((r) => r.path)).toEqual([
      DETAILS,
      `/medrxiv/api/pubs/medrxiv/${DOI}/na/json`,
    ]);
    expect(result.records[0]).toMatchObject({
      identifier: DOI,
      source: "medrxiv",
      authors: ["Haddad R", "Mensah KO"],
      primaryCitation: { label: `[medRxiv:${DOI}v2](https://www.medrxiv.org/content/${DOI}v2)` },
      structuredData: {
        server: "medRxiv",
        articleType: "posted preprint (medRxiv gives no results type)",
        articleTypeCode: "PUBLISHAHEADOFPRINT",
        category: "infectious diseases",
        license: "CC-BY-NC-ND-4.0",
        publishedDoi: "10.1056/NEJMoa2100001",
        publishedJournal: "New England Journal of Medicine",
        publishedDate: "2021-02-18",
      },
    });
    expect(result.data).toEqual({ doi: DOI, version: 2, latestVersion: 2, versions: [1, 2] });
    expectUrlsOnManifestHosts(result, "medrxiv");
  });

  test("a bioRxiv DOI is not_found with a hint to bioRxiv", async () => {
    const error = errorOf(await h.call("medrxiv_lookup_doi", { doi: "10.1101/2024.01.15.575001" }));
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("biorxiv_lookup_doi");
  });

  test("an invalid id is invalid_id without any provider request", async () => {
    expect(errorOf(await h.call("medrxiv_lookup_doi", { doi: "medrxiv 20191205" }))).toMatchObject({
      code: "invalid_id",
    });
    expect(h.provider.requests).toHaveLength(0);
  });

  test("a 5xx is upstream_unavailable", async () => {
    h.provider.setFault({ path: DETAILS }, { status: 504 });
    expect(errorOf(await h.call("medrxiv_lookup_doi", { doi: DOI }))).toMatchObject({
      code: "upstream_unavailable",
      status: 504,
    });
  });
});

describe("medrxiv_prepare_paper_download", () => {
  test("gives the PDF of the requested version on www.medrxiv.org with its licence", async () => {
    const result = okResult(await h.call("medrxiv_prepare_paper_download", { id: `doi:${DOI}v1` }));
    expect(result.artifacts?.map((a) => [a.candidateId, a.url, a.format, a.license])).toEqual([
      [`medrxiv:${DOI}v1:pdf`, `https://www.medrxiv.org/content/${DOI}v1.full.pdf`, "pdf", "CC-BY-NC-ND-4.0"],
      [
        `medrxiv:${DOI}v1:xml`,
        "https://www.medrxiv.org/content/early/2020/09/11/2020.09.09.20191205.source.xml",
        "xml",
        "CC-BY-NC-ND-4.0",
      ],
    ]);
    expect(result.data).toMatchObject({ version: 1, latestVersion: 2 });
    expect(result.warnings).toEqual(["Version v1 was asked for; the latest version is v2."]);
    expectUrlsOnManifestHosts(result, "medrxiv");
  });

  test("an unknown preprint is not_found", async () => {
    expect(
      errorOf(await h.call("medrxiv_prepare_paper_download", { id: "10.64898/2026.01.01.26000000" })),
    ).toMatchObject({ code: "not_found" });
  });
});
