import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  ARXIV_FIXTURE_QUERY,
  ARXIV_FIXTURES,
  arxivFakeRoutes,
} from "../../fixtures/providers/arxiv/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const QUERY = "/arxiv/api/query";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(arxivFakeRoutes(), {
    only: ["arxiv"],
    env: { NCBI_API_KEY: "must-not-leak" },
  });
});
afterEach(() => h.close());

describe("arxiv_search", () => {
  test("returns preprint records with versioned citations, categories, DOI and paging", async () => {
    const result = okResult(await h.call("arxiv_search", { query: ARXIV_FIXTURE_QUERY, max_results: 2 }));
    const manifest = readManifest("arxiv");
    expect(result).toMatchObject({
      sourceId: "arxiv",
      toolId: "search",
      license: "CC0-1.0",
      attribution: manifest.governance.attribution,
      data: { total: 23, start: 0, returned: 2, hasMore: true, nextStart: 2 },
    });
    const [first, second] = result.records;
    expect(first).toMatchObject({
      identifier: "2403.01234",
      identifierType: "arxiv",
      title: "Genome-wide Off-target Prediction for CRISPR Base Editors with Graph Neural Networks",
      url: "https://arxiv.org/abs/2403.01234",
      authors: ["Lena Kowalski", "Rahul Mehta"],
      year: 2024,
      contentScope: "abstract",
      peerReviewStatus: "preprint",
      fullTextRetrieved: false,
      primaryCitation: {
        label: "[arXiv:2403.01234v2](https://arxiv.org/abs/2403.01234v2)",
        url: "https://arxiv.org/abs/2403.01234v2",
        version: "v2",
      },
      crossReferences: [{ identifier: "10.1093/bioinformatics/btae301", identifierType: "published-doi" }],
      warnings: [
        "The authors report a published version of arXiv:2403.01234v2: doi:10.1093/bioinformatics/btae301 " +
          "(Bioinformatics 40 (2024) btae301); prefer citing the published version.",
      ],
      structuredData: {
        publishedDoi: "10.1093/bioinformatics/btae301",
        version: "v2",
        primaryCategory: "q-bio.GN",
        categories: ["q-bio.GN", "cs.LG"],
        journalRef: "Bioinformatics 40 (2024) btae301",
        license: "http://creativecommons.org/licenses/by/4.0/",
      },
    });
    expect(first?.abstract).toMatch(
      /^We predict off-target edits .* guide&target pairs\. .* 0\.94 < held-out guides\.$/,
    );
    expect(second).toMatchObject({ identifier: "2311.05678", crossReferences: [] });
    expectUrlsOnManifestHosts(result, "arxiv");
  });

  test("sends the arXiv query parameters, a User-Agent, and no NCBI parameters", async () => {
    okResult(await h.call("arxiv_search", { query: ARXIV_FIXTURE_QUERY, sort: "date", start: "" }));
    const [request] = h.provider.requests;
    expect(request?.query).toEqual({
      search_query: ARXIV_FIXTURE_QUERY,
      start: "0",
      max_results: "10",
      sortBy: "submittedDate",
      sortOrder: "descending",
    });
    expect(request?.headers["user-agent"]).toMatch(/^sciencegate\//);
  });

  test("an empty result is a success with total 0", async () => {
    const result = okResult(await h.call("arxiv_search", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, start: 0, returned: 0, hasMore: false });
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried by the server; the next call succeeds", async () => {
    h.provider.setFault({ path: QUERY }, { status: 429, retryAfter: "3" });
    expect(errorOf(await h.call("arxiv_search", { query: ARXIV_FIXTURE_QUERY }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 3000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(okResult(await h.call("arxiv_search", { query: ARXIV_FIXTURE_QUERY })).records).toHaveLength(2);
  });

  test.each([
    ["a 502", { status: 502 }, { code: "upstream_unavailable", status: 502 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
    [
      "a redirect",
      { redirectTo: "https://example.org/moved?q=crispr" },
      { code: "upstream_unavailable", status: 302 },
    ],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: QUERY }, fault);
    const error = errorOf(await h.call("arxiv_search", { query: ARXIV_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain(ARXIV_FIXTURE_QUERY);
  });
});

describe("arxiv_lookup", () => {
  test("accepts new and old style ids, versions, prefixes and URLs, with per-id failures", async () => {
    const result = okResult(
      await h.call("arxiv_lookup", {
        ids: [
          "arXiv:2403.01234",
          "https://arxiv.org/abs/hep-th/9901001v3",
          "math.GT/0309136",
          "2311.05678v9",
          "bad id",
          "2403.01234v2",
        ],
      }),
    );
    expect(result.records.map((r) => [r.identifier, r.primaryCitation.version])).toEqual([
      ["2403.01234", "v2"],
      ["hep-th/9901001", "v3"],
      ["math/0309136", "v1"],
    ]);
    expect(result.data).toEqual({
      requested: 6,
      returned: 3,
      failed: [
        { id: "bad id", reason: "invalid_id" },
        { id: "2311.05678v9", reason: "not_found" },
      ],
    });
    expect(h.provider.requests[0]?.query).toMatchObject({
      id_list: "2403.01234,hep-th/9901001v3,math/0309136,2311.05678v9,2403.01234v2",
      max_results: "5",
    });
    expectUrlsOnManifestHosts(result, "arxiv");
  });

  test("an id arXiv does not know is not_found", async () => {
    expect(errorOf(await h.call("arxiv_lookup", { ids: ["2301.99999"] }))).toMatchObject({
      code: "not_found",
    });
  });

  test("only invalid ids is invalid_id, without any provider request", async () => {
    expect(errorOf(await h.call("arxiv_lookup", { ids: ["abc", "1613.00001"] }))).toMatchObject({
      code: "invalid_id",
    });
    expect(h.provider.requests).toHaveLength(0);
  });

  test("arXiv's HTTP 400 error feed is invalid_id", async () => {
    const body = readFileSync(path.join(ARXIV_FIXTURES, "error-bad-id.atom"), "utf8");
    h.provider.setFault({ path: QUERY }, { status: 400, body });
    expect(errorOf(await h.call("arxiv_lookup", { ids: ["2403.01234"] }))).toMatchObject({
      code: "invalid_id",
      status: 400,
    });
  });
});

describe("arxiv_prepare_paper_download", () => {
  test("gives the versioned HTTPS PDF candidate with the stated licence and downloads nothing", async () => {
    const result = okResult(
      await h.call("arxiv_prepare_paper_download", { id: "https://arxiv.org/abs/2403.01234" }),
    );
    expect(result.artifacts).toEqual([
      {
        candidateId: "arxiv:2403.01234v2:pdf",
        sourceId: "arxiv",
        sourceRecordId: "2403.01234",
        url: "https://arxiv.org/pdf/2403.01234v2",
        format: "pdf",
        kind: "paper",
        filename: "2403.01234v2.pdf",
        license: "http://creativecommons.org/licenses/by/4.0/",
      },
    ]);
    expect(result.warnings).toEqual([]);
    expect(h.provider.requests.map((r) => r.path)).toEqual([QUERY]);
    expectUrlsOnManifestHosts(result, "arxiv");
  });

  test("an old-style paper without a stated licence gets a candidate without licence and a warning", async () => {
    const result = okResult(await h.call("arxiv_prepare_paper_download", { id: "hep-th/9901001" }));
    expect(result.artifacts?.[0]).toMatchObject({
      url: "https://arxiv.org/pdf/hep-th/9901001v3",
      filename: "hep-th_9901001v3.pdf",
    });
    expect(result.artifacts?.[0]?.license).toBeUndefined();
    expect(result.warnings[0]).toMatch(/did not state this paper's licence/);
  });

  test.each([
    ["an unknown paper", "2301.99999", "not_found"],
    ["an invalid id", "not an id", "invalid_id"],
  ])("%s (%s) is %s", async (_name, id, code) => {
    expect(errorOf(await h.call("arxiv_prepare_paper_download", { id }))).toMatchObject({ code });
  });
});
