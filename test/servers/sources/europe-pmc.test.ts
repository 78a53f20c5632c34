import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  EUROPE_PMC_FIXTURE_QUERY,
  EUROPE_PMC_PAGE2_CURSOR,
  EUROPE_PMC_REJECTED_QUERY,
  europePmcFakeRoutes,
} from "../../fixtures/providers/europe-pmc/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SEARCH = "/europe-pmc/rest/search";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(europePmcFakeRoutes(), { only: ["europe-pmc"] });
});
afterEach(() => h.close());

describe("europe-pmc_search", () => {
  test("returns records with abstracts, identifiers, open-access facts and a next cursor", async () => {
    const result = okResult(
      await h.call("europe-pmc_search", { query: EUROPE_PMC_FIXTURE_QUERY, max_results: 2 }),
    );
    expect(result).toMatchObject({
      sourceId: "europe-pmc",
      toolId: "search",
      attribution: readManifest("europe-pmc").governance.attribution,
      data: { total: 3, returned: 2, cursor: "*", hasMore: true, nextCursor: EUROPE_PMC_PAGE2_CURSOR },
    });
    const [article, preprint] = result.records;
    expect(article).toMatchObject({
      identifier: "39000101",
      identifierType: "pmid",
      title: "Adenine base editing of PCSK9 in primary human hepatocytes.",
      url: "https://europepmc.org/article/MED/39000101",
      authors: ["Okafor AN", "Lindqvist E", "Base Editing Consortium"],
      year: 2024,
      contentScope: "abstract",
      peerReviewStatus: "peer-reviewed",
      fullTextRetrieved: false,
      primaryCitation: {
        label: "[PMID:39000101](https://europepmc.org/article/MED/39000101)",
        identifier: "39000101",
      },
      crossReferences: [
        { identifier: "10.1038/s41587-024-00001-x", identifierType: "doi" },
        {
          identifier: "PMC9100001",
          identifierType: "pmcid",
          url: "https://europepmc.org/article/PMC/PMC9100001",
        },
      ],
      structuredData: {
        journal: "Nature biotechnology",
        volume: "42",
        pages: "712-720",
        isOpenAccess: true,
        license: "cc by",
        citedByCount: 12,
        keywords: ["Base editing", "PCSK9", "Hepatocytes"],
        // Published online a day before the print issue; both dates labelled.
        electronicPublicationDate: "2024-05-02",
        printPublicationDate: "2024-05-01",
        authorDetails: [
          { family: "Okafor", given: "Adaeze N", initials: "AN", orcid: "0000-0002-0000-0001" },
          { family: "Lindqvist", given: "Erik", initials: "E" },
          { collective: "Base Editing Consortium" },
        ],
      },
    });
    expect(article?.abstract).toBe(
      "Background: Lowering PCSK9 reduces LDL cholesterol & cardiovascular risk.\n\nMethods: We edited PCSK9 in " +
        "hepatocytes from 12 donors with an adenine base editor.\n\nResults: Editing reached 61% (p < 0.001) without " +
        "detectable off-target edits.",
    );
    expect(preprint).toMatchObject({
      identifier: "PPR900001",
      identifierType: "ppr",
      url: "https://europepmc.org/article/PPR/PPR900001",
      contentScope: "metadata",
      peerReviewStatus: "preprint",
      structuredData: { preprintServer: "bioRxiv" },
    });
    expect(preprint?.abstract).toBeUndefined();
    expectUrlsOnManifestHosts(result, "europe-pmc");
  });

  test("sends a core JSON search with cursor and sort, and treats an empty cursor as the first page", async () => {
    okResult(
      await h.call("europe-pmc_search", { query: EUROPE_PMC_FIXTURE_QUERY, cursor: "", sort: "date" }),
    );
    expect(h.provider.requests[0]?.query).toEqual({
      query: EUROPE_PMC_FIXTURE_QUERY,
      format: "json",
      resultType: "core",
      pageSize: "10",
      cursorMark: "*",
      sort: "P_PDATE_D desc",
    });
    expect(h.provider.requests[0]?.headers["user-agent"]).toMatch(/^sciencegate\//);
  });

  test("the cursor of the last page gives the rest and no further cursor", async () => {
    const result = okResult(
      await h.call("europe-pmc_search", {
        query: EUROPE_PMC_FIXTURE_QUERY,
        max_results: 2,
        cursor: EUROPE_PMC_PAGE2_CURSOR,
      }),
    );
    expect(result.data).toEqual({ total: 3, returned: 1, cursor: EUROPE_PMC_PAGE2_CURSOR, hasMore: false });
    expect(result.records[0]).toMatchObject({
      identifier: "PMC9100003",
      identifierType: "pmcid",
      url: "https://europepmc.org/article/PMC/PMC9100003",
      primaryCitation: { label: "[PMC9100003](https://europepmc.org/article/PMC/PMC9100003)" },
      crossReferences: [{ identifier: "10.3389/fgene.2024.1000003", identifierType: "doi" }],
    });
    expectUrlsOnManifestHosts(result, "europe-pmc");
  });

  test("an empty result is a success with total 0", async () => {
    const result = okResult(await h.call("europe-pmc_search", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, returned: 0, cursor: "*", hasMore: false });
  });

  test("429 comes back as rate_limited with retryAfterMs, not retried by the server; the next call succeeds", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call("europe-pmc_search", { query: EUROPE_PMC_FIXTURE_QUERY }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 2000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(
      okResult(await h.call("europe-pmc_search", { query: EUROPE_PMC_FIXTURE_QUERY })).records,
    ).toHaveLength(2);
  });

  test.each([
    ["a 503", { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
    ["an empty body", { status: 200, body: "" }, { code: "upstream_unavailable", status: 200 }],
    [
      "an XML errorBean instead of JSON",
      { status: 200, body: "<errorBean><errCode>0</errCode><errMsg>Query syntax error</errMsg></errorBean>" },
      { code: "invalid_input", status: 200 },
    ],
    [
      "a redirect",
      { redirectTo: "https://example.org/moved?query=crispr" },
      { code: "upstream_unavailable", status: 302 },
    ],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: SEARCH }, fault);
    const error = errorOf(await h.call("europe-pmc_search", { query: EUROPE_PMC_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain(EUROPE_PMC_FIXTURE_QUERY);
  });

  test("Europe PMC's HTTP-200 error body is invalid_input, never an empty success", async () => {
    const error = errorOf(await h.call("europe-pmc_search", { query: EUROPE_PMC_REJECTED_QUERY }));
    expect(error).toMatchObject({ code: "invalid_input", status: 200 });
    expect(error.message).toMatch(/error code 404/);
    expect(error.message).not.toContain("unbalanced");
  });
});

describe("europe-pmc_prepare_paper_download", () => {
  test("gives the rendered PDF and the JATS XML of an open-access article with its licence", async () => {
    const result = okResult(await h.call("europe-pmc_prepare_paper_download", { id: "PMC9100001" }));
    const common = { sourceId: "europe-pmc", sourceRecordId: "PMC9100001", kind: "paper", license: "CC BY" };
    expect(result.artifacts).toEqual([
      {
        ...common,
        candidateId: "europe-pmc:PMC9100001:pdf",
        url: "https://europepmc.org/articles/PMC9100001?pdf=render",
        format: "pdf",
        filename: "PMC9100001.pdf",
      },
      {
        ...common,
        candidateId: "europe-pmc:PMC9100001:xml",
        url: "https://www.ebi.ac.uk/europepmc/webservices/rest/PMC9100001/fullTextXML",
        format: "xml",
        filename: "PMC9100001.xml",
      },
    ]);
    expect(result.records.map((r) => r.identifier)).toEqual(["39000101"]);
    expect(result.data).toEqual({ pmcid: "PMC9100001", license: "CC BY", isOpenAccess: true });
    expect(result.warnings).toEqual([]);
    expect(h.provider.requests.map((r) => r.query.query)).toEqual(["PMCID:PMC9100001"]);
    expectUrlsOnManifestHosts(result, "europe-pmc");
  });

  test.each([
    "PMCID:PMC9100001",
    "pmc9100001.2",
    "https://europepmc.org/article/PMC/PMC9100001",
    "europepmc.org/articles/PMC9100001?pdf=render",
    "https://pmc.ncbi.nlm.nih.gov/articles/PMC9100001/",
  ])("accepts the PMCID form %s", async (id) => {
    const result = okResult(await h.call("europe-pmc_prepare_paper_download", { id }));
    expect(result.artifacts?.map((a) => a.sourceRecordId)).toEqual(["PMC9100001", "PMC9100001"]);
  });

  test.each([
    ["an article outside the open-access subset", "PMC3000011", "not_open_access"],
    ["an unknown PMCID", "PMC9999999", "not_found"],
  ])("%s (%s) is %s", async (_name, id, code) => {
    expect(errorOf(await h.call("europe-pmc_prepare_paper_download", { id }))).toMatchObject({ code });
  });

  test.each([
    ["a PMID", "39000101"],
    ["free text", "base editing review"],
    ["a PubMed URL", "https://pubmed.ncbi.nlm.nih.gov/39000101/"],
  ])("%s is invalid_id without any provider request", async (_name, id) => {
    const error = errorOf(await h.call("europe-pmc_prepare_paper_download", { id }));
    expect(error.code).toBe("invalid_id");
    expect(error.message).not.toContain("base editing review");
    expect(h.provider.requests).toHaveLength(0);
  });

  test("a 500 is upstream_unavailable with its status", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 500 });
    expect(errorOf(await h.call("europe-pmc_prepare_paper_download", { id: "PMC9100001" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 500,
    });
  });
});
