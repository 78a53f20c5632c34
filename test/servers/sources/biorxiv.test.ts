import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { BIORXIV_FIXTURE_QUERY, biorxivFakeRoutes } from "../../fixtures/providers/biorxiv/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const DOI = "10.1101/2024.01.15.575001";
const NEW_DOI = "10.64898/2026.03.02.700123";
const DETAILS = `/biorxiv/api/details/biorxiv/${DOI}/na/json`;
const PUBS = `/biorxiv/api/pubs/biorxiv/${DOI}/na/json`;
const SEARCH = "/biorxiv/europe-pmc/search";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(biorxivFakeRoutes(), { only: ["biorxiv"] });
});
afterEach(() => h.close());

describe("biorxiv_search_preprints", () => {
  test("searches Europe PMC's bioRxiv preprints, says so, and returns DOI-identified preprint records", async () => {
    const result = okResult(
      await h.call("biorxiv_search_preprints", { query: BIORXIV_FIXTURE_QUERY, max_results: 3 }),
    );
    expect(h.provider.requests[0]).toMatchObject({
      path: SEARCH,
      query: {
        query: `(${BIORXIV_FIXTURE_QUERY}) AND SRC:PPR AND PUBLISHER:"bioRxiv"`,
        resultType: "core",
        pageSize: "3",
        cursorMark: "*",
      },
    });
    expect(result).toMatchObject({
      sourceId: "biorxiv",
      toolId: "search_preprints",
      attribution: readManifest("biorxiv").governance.attribution,
      data: {
        total: 14,
        returned: 2,
        hasMore: true,
        nextCursor: "AoIIQHqxVSg4MDAwMDQ=",
        searchedVia: "europe-pmc",
      },
    });
    expect(result.warnings[0]).toMatch(/no keyword search.*Europe PMC's preprint index \(SRC:PPR/);
    expect(result.warnings[1]).toBe("1 hit(s) were not bioRxiv preprints with a DOI and are left out.");
    const [first, second] = result.records;
    expect(first).toMatchObject({
      identifier: DOI,
      identifierType: "doi",
      url: `https://www.biorxiv.org/content/${DOI}`,
      primaryCitation: { label: `[bioRxiv:${DOI}](https://www.biorxiv.org/content/${DOI})` },
      authors: ["Ferreira AC", "Nakamura T"],
      abstract: "We corrected a splice-site variant in intestinal organoids with a cytosine base editor.",
      contentScope: "abstract",
      peerReviewStatus: "preprint",
      crossReferences: [
        { identifier: DOI, identifierType: "doi", url: `https://doi.org/${DOI}` },
        {
          identifier: "PPR800002",
          identifierType: "ppr",
          url: "https://europepmc.org/article/PPR/PPR800002",
        },
      ],
    });
    expect(second).toMatchObject({ identifier: NEW_DOI, contentScope: "metadata" });
    expectUrlsOnManifestHosts(result, "biorxiv");
  });

  test("an empty result is a success with total 0 and the same warning", async () => {
    const result = okResult(await h.call("biorxiv_search_preprints", { query: "zzqxv", cursor: "" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({
      total: 0,
      returned: 0,
      cursor: "*",
      hasMore: false,
      searchedVia: "europe-pmc",
    });
    expect(result.warnings).toHaveLength(1);
  });

  test("429 from Europe PMC is rate_limited with retryAfterMs; the next call succeeds", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "4" });
    expect(errorOf(await h.call("biorxiv_search_preprints", { query: BIORXIV_FIXTURE_QUERY }))).toMatchObject(
      {
        code: "rate_limited",
        status: 429,
        retryAfterMs: 4000,
      },
    );
    expect(
      okResult(await h.call("biorxiv_search_preprints", { query: BIORXIV_FIXTURE_QUERY })).records,
    ).toHaveLength(2);
  });

  test("a 502 is upstream_unavailable and does not echo the query", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 502 });
    const error = errorOf(await h.call("biorxiv_search_preprints", { query: BIORXIV_FIXTURE_QUERY }));
    expect(error).toMatchObject({ code: "upstream_unavailable", status: 502 });
    expect(error.message).not.toContain(BIORXIV_FIXTURE_QUERY);
  });
});

describe("biorxiv_lookup_doi", () => {
  test("returns the latest version with its versions, licence, category and published journal version", async () => {
    const result = okResult(await h.call("biorxiv_lookup_doi", { doi: DOI }));
    expect(h.provider.requests.map((r) => r.path)).toEqual([DETAILS, PUBS]);
    expect(result.data).toEqual({ doi: DOI, version: 2, latestVersion: 2, versions: [1, 2] });
    expect(result.warnings).toEqual([]);
    expect(result.records).toHaveLength(1);
    expect(result.records[0]).toMatchObject({
      identifier: DOI,
      identifierType: "doi",
      title: "Base editing rescues splicing in patient-derived organoids",
      url: `https://www.biorxiv.org/content/${DOI}`,
      authors: ["Ferreira AC", "Nakamura T", "Organoid Genomics Consortium"],
      year: 2024,
      abstract:
        "We corrected a splice-site variant in intestinal organoids with a cytosine base editor. Correction " +
        "restored cftr splicing in 9 of 10 lines (p < 0.01).",
      contentScope: "abstract",
      peerReviewStatus: "preprint",
      primaryCitation: {
        label: `[bioRxiv:${DOI}v2](https://www.biorxiv.org/content/${DOI}v2)`,
        url: `https://www.biorxiv.org/content/${DOI}v2`,
        version: "v2",
      },
      crossReferences: [
        { identifier: DOI, identifierType: "doi" },
        {
          identifier: "10.1038/s41586-024-07001-2",
          identifierType: "published-doi",
          url: "https://doi.org/10.1038/s41586-024-07001-2",
        },
      ],
      structuredData: {
        server: "bioRxiv",
        version: 2,
        versions: [1, 2],
        postedDate: "2024-06-02",
        category: "genomics",
        articleType: "new results",
        articleTypeCode: "new results",
        license: "CC-BY-4.0",
        licenseCode: "cc_by",
        correspondingAuthor: "Ana C. Ferreira",
        publishedDoi: "10.1038/s41586-024-07001-2",
        publishedJournal: "Nature",
        publishedDate: "2024-11-20",
      },
    });
    expect(result.records[0]?.warnings).toEqual([
      "A journal version of this preprint was published as doi:10.1038/s41586-024-07001-2 in Nature on " +
        "2024-11-20; prefer citing the published version.",
    ]);
    expectUrlsOnManifestHosts(result, "biorxiv");
  });

  test.each([
    ["a doi: prefix", `doi:${DOI}`, 2],
    ["a doi.org URL", `https://doi.org/${DOI}`, 2],
    ["a versioned content URL", `https://www.biorxiv.org/content/${DOI}v1.full.pdf`, 1],
    ["a version suffix", `${DOI}v1`, 1],
    ["the new prefix", NEW_DOI, 1],
  ])("accepts %s (%s) and reads version %s", async (_name, doi, version) => {
    const result = okResult(await h.call("biorxiv_lookup_doi", { doi }));
    expect(result.data?.version).toBe(version);
    expect(result.records[0]?.primaryCitation.version).toBe(`v${version}`);
  });

  test("a DOI bioRxiv does not know is not_found with a hint to medRxiv", async () => {
    const error = errorOf(await h.call("biorxiv_lookup_doi", { doi: "10.1101/2020.09.09.20191205" }));
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("medrxiv_lookup_doi");
  });

  test("a version that does not exist is not_found naming the versions", async () => {
    const error = errorOf(await h.call("biorxiv_lookup_doi", { doi: `${DOI}v7` }));
    expect(error).toMatchObject({ code: "not_found" });
    expect(error.message).toContain("versions: 1, 2");
  });

  test.each([
    ["a Cold Spring Harbor journal DOI", "10.1101/gad.1234567.115"],
    ["another publisher's DOI", "10.1038/s41586-024-07001-2"],
    ["free text", "base editing in organoids"],
    ["an arXiv URL", "https://arxiv.org/abs/2403.01234"],
  ])("%s is invalid_id without any provider request", async (_name, doi) => {
    const error = errorOf(await h.call("biorxiv_lookup_doi", { doi }));
    expect(error.code).toBe("invalid_id");
    expect(error.message).not.toContain("base editing in organoids");
    expect(h.provider.requests).toHaveLength(0);
  });

  test.each([
    ["a 500", { status: 500 }, { code: "upstream_unavailable", status: 500 }],
    ["an empty 200 body", { status: 200, body: "" }, { code: "upstream_unavailable", status: 200 }],
    [
      "an API error status",
      { status: 200, body: '{"messages":[{"status":"error"}],"collection":[]}' },
      { code: "upstream_unavailable", status: 200 },
    ],
    ["a 429", { status: 429, retryAfter: "1" }, { code: "rate_limited", retryAfterMs: 1000 }],
  ])("%s from the API is a structured error", async (_name, fault, expected) => {
    h.provider.setFault({ path: DETAILS }, fault);
    expect(errorOf(await h.call("biorxiv_lookup_doi", { doi: DOI }))).toMatchObject(expected);
  });
});

describe("biorxiv_prepare_paper_download", () => {
  test("gives the versioned PDF and JATS XML candidates with the authors' licence", async () => {
    const result = okResult(await h.call("biorxiv_prepare_paper_download", { id: `https://doi.org/${DOI}` }));
    const common = { sourceId: "biorxiv", sourceRecordId: DOI, kind: "paper", license: "CC-BY-4.0" };
    expect(result.artifacts).toEqual([
      {
        ...common,
        candidateId: `biorxiv:${DOI}v2:pdf`,
        url: `https://www.biorxiv.org/content/${DOI}v2.full.pdf`,
        format: "pdf",
        filename: "2024.01.15.575001v2.full.pdf",
      },
      {
        ...common,
        candidateId: `biorxiv:${DOI}v2:xml`,
        url: "https://www.biorxiv.org/content/early/2024/06/02/2024.01.15.575001.source.xml",
        format: "xml",
        filename: "2024.01.15.575001v2.source.xml",
      },
    ]);
    expect(result.data).toEqual({ doi: DOI, version: 2, latestVersion: 2, license: "CC-BY-4.0" });
    expect(result.warnings).toEqual([]);
    expectUrlsOnManifestHosts(result, "biorxiv");
  });

  test("a reserved-rights preprint gets a warning, and an http:// JATS link is not a candidate", async () => {
    const result = okResult(await h.call("biorxiv_prepare_paper_download", { id: NEW_DOI }));
    expect(result.artifacts?.map((a) => [a.format, a.url, a.license])).toEqual([
      [
        "pdf",
        `https://www.biorxiv.org/content/${NEW_DOI}v1.full.pdf`,
        "All rights reserved (no reuse without permission)",
      ],
    ]);
    expect(result.warnings[0]).toMatch(/authors reserve all rights/);
    expectUrlsOnManifestHosts(result, "biorxiv");
  });

  test.each([
    ["an unknown preprint", "10.1101/2023.05.05.000000", "not_found"],
    ["an invalid id", "not a doi", "invalid_id"],
  ])("%s (%s) is %s", async (_name, id, code) => {
    expect(errorOf(await h.call("biorxiv_prepare_paper_download", { id }))).toMatchObject({ code });
  });

  test("a 503 is upstream_unavailable", async () => {
    h.provider.setFault({ path: DETAILS }, { status: 503 });
    expect(errorOf(await h.call("biorxiv_prepare_paper_download", { id: DOI }))).toMatchObject({
      code: "upstream_unavailable",
      status: 503,
    });
  });
});
