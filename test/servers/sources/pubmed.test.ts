import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  PUBMED_FIXTURE_QUERY,
  PUBMED_FIXTURES,
  pubmedFakeRoutes,
} from "../../fixtures/providers/pubmed/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const ESEARCH = "/pubmed/eutils/esearch.fcgi";
const EFETCH = "/pubmed/eutils/efetch.fcgi";
const OA = "/pubmed/pmc-oa/oa.fcgi";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(pubmedFakeRoutes(), {
    only: ["pubmed"],
    env: { NCBI_EMAIL: "lab@example.org", NCBI_API_KEY: "k123" },
  });
});
afterEach(() => h.close());

const requestsTo = (p: string) => h.provider.requests.filter((r) => r.path === p);

describe("pubmed_search", () => {
  test("returns the hits in ESearch order with abstracts, citations, identifiers and paging", async () => {
    const result = okResult(await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY, max_results: 2 }));
    const manifest = readManifest("pubmed");
    expect(result).toMatchObject({
      sourceId: "pubmed",
      toolId: "search",
      untrusted: true,
      attribution: manifest.governance.attribution,
      license: manifest.governance.license,
      data: { total: 57, start: 0, returned: 2, hasMore: true, nextStart: 2 },
    });
    expect(Date.parse(result.retrievedAt)).not.toBeNaN();
    const [first, second] = result.records;
    expect(first).toMatchObject({
      identifier: "39000001",
      identifierType: "pmid",
      title: "Base editing corrects HBB mutations in patient-derived haematopoietic stem cells.",
      url: "https://pubmed.ncbi.nlm.nih.gov/39000001/",
      authors: ["Müller J", "Okafor A", "Gene Editing Consortium"],
      year: 2024,
      contentScope: "abstract",
      fullTextRetrieved: false,
      peerReviewStatus: "peer-reviewed",
      primaryCitation: { label: "[PMID:39000001](https://pubmed.ncbi.nlm.nih.gov/39000001/)" },
      crossReferences: [
        { identifier: "10.1038/s41591-024-00001-x", identifierType: "doi" },
        {
          identifier: "PMC9000001",
          identifierType: "pmcid",
          url: "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000001/",
        },
      ],
    });
    expect(first?.abstract).toMatch(
      /^BACKGROUND: Sickle cell disease is caused by a point mutation in HBB\./,
    );
    expect(first?.abstract).toContain("CD34⁺ cells");
    expect(first?.abstract).toContain("(P<0.001)");
    expect(first?.abstract).toContain("efficient & durable");
    // No abstract: metadata only, never "abstract"; a letter/comment is not claimed as peer-reviewed.
    expect(second).toMatchObject({
      identifier: "39000002",
      contentScope: "metadata",
      peerReviewStatus: "unknown",
    });
    expect(second?.abstract).toBeUndefined();
    expect(second?.crossReferences).toEqual([
      {
        identifier: "10.1038/s41467-024-00002-y",
        identifierType: "doi",
        url: "https://doi.org/10.1038/s41467-024-00002-y",
      },
    ]);
    expectUrlsOnManifestHosts(result, "pubmed");
  });

  test("sends one ESearch and one EFetch, identified with tool, email, api_key and User-Agent", async () => {
    okResult(
      await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY, max_results: 2, sort: "date", start: 0 }),
    );
    const [search] = requestsTo(ESEARCH);
    expect(search?.query).toMatchObject({
      db: "pubmed",
      term: PUBMED_FIXTURE_QUERY,
      retmode: "json",
      retmax: "2",
      retstart: "0",
      sort: "pub_date",
      tool: "sciencegate",
      email: "lab@example.org",
      api_key: "k123",
    });
    expect(search?.headers["user-agent"]).toMatch(
      /^sciencegate\/\d+\.\d+\.\d+ \(.*mailto:lab@example\.org\)$/,
    );
    expect(requestsTo(EFETCH).map((r) => r.query.id)).toEqual(["39000001,39000002"]);
  });

  test("empty optional strings count as absent", async () => {
    okResult(
      await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY, sort: "", start: "", max_results: "" }),
    );
    const [search] = requestsTo(ESEARCH);
    expect(search?.query.sort).toBeUndefined();
    expect(search?.query).toMatchObject({ retstart: "0", retmax: "10" });
  });

  test("an empty result is a success with total 0, no EFetch, and a warning for unmatched phrases", async () => {
    const result = okResult(await h.call("pubmed_search", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({
      total: 0,
      start: 0,
      returned: 0,
      hasMore: false,
      droppedPhrases: ["zzqxv"],
    });
    expect(result.warnings).toEqual(['PubMed found nothing for "zzqxv" and dropped it from the query.']);
    expect(requestsTo(EFETCH)).toHaveLength(0);
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried by the server; the next call succeeds", async () => {
    const body = readFileSync(path.join(PUBMED_FIXTURES, "rate-limit.json"), "utf8");
    h.provider.setFault({ path: ESEARCH }, { status: 429, retryAfter: "2", body });
    const first = errorOf(await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY }));
    expect(first).toMatchObject({ code: "rate_limited", status: 429, retryAfterMs: 2000 });
    expect(requestsTo(ESEARCH)).toHaveLength(1);
    const second = okResult(await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY }));
    expect(second.records).toHaveLength(2);
  });

  test("NCBI's over-limit body with HTTP 200 is rate_limited, not an empty success", async () => {
    const body = readFileSync(path.join(PUBMED_FIXTURES, "rate-limit.json"), "utf8");
    h.provider.setFault({ path: ESEARCH }, { status: 200, body });
    expect(errorOf(await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY }))).toMatchObject({
      code: "rate_limited",
    });
  });

  test.each([
    ["a 503", { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    ["a malformed EFetch body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: "status" in fault ? ESEARCH : EFETCH }, fault);
    const error = errorOf(await h.call("pubmed_search", { query: PUBMED_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain("crispr");
  });
});

describe("pubmed_fetch_abstracts", () => {
  test("normalizes PMIDs, reports per-id failures, and keeps the requested order", async () => {
    const result = okResult(
      await h.call("pubmed_fetch_abstracts", {
        pmids: [
          "PMID:22000011",
          "https://pubmed.ncbi.nlm.nih.gov/39000001/",
          "99999999",
          "not-a-pmid",
          "22000011",
        ],
      }),
    );
    expect(result.records.map((r) => [r.identifier, r.year])).toEqual([
      ["22000011", 2012],
      ["39000001", 2024],
    ]);
    expect(result.data).toEqual({
      requested: 5,
      returned: 2,
      failed: [
        { id: "not-a-pmid", reason: "invalid_id" },
        { id: "99999999", reason: "not_found" },
      ],
    });
    expect(requestsTo(EFETCH).map((r) => r.query.id)).toEqual(["22000011,39000001,99999999"]);
    expectUrlsOnManifestHosts(result, "pubmed");
  });

  test("a PMID PubMed does not know is not_found", async () => {
    expect(errorOf(await h.call("pubmed_fetch_abstracts", { pmids: ["99999999"] }))).toMatchObject({
      code: "not_found",
    });
  });

  test("only invalid ids is invalid_id, without any provider request", async () => {
    expect(errorOf(await h.call("pubmed_fetch_abstracts", { pmids: ["abc", "PMC123"] }))).toMatchObject({
      code: "invalid_id",
    });
    expect(h.provider.requests).toHaveLength(0);
  });

  test("a book chapter record is parsed too", async () => {
    const result = okResult(await h.call("pubmed_fetch_abstracts", { pmids: ["20301390"] }));
    expect(result.records[0]).toMatchObject({
      title: "Sickle Cell Disease",
      year: 1993,
      contentScope: "abstract",
      authors: ["Bender MA"],
      structuredData: { bookTitle: "GeneReviews®" },
    });
  });
});

describe("pubmed_find_related", () => {
  test("cited_by returns the citing articles' records", async () => {
    const result = okResult(
      await h.call("pubmed_find_related", { pmid: "PMID:22000011", relation: "cited_by" }),
    );
    expect(result.records.map((r) => r.identifier)).toEqual(["39000001", "39000002"]);
    expect(result.data).toMatchObject({ pmid: "22000011", relation: "cited_by", total: 2, hasMore: false });
    expectUrlsOnManifestHosts(result, "pubmed");
  });

  test("similar leaves out the article itself and pages", async () => {
    const result = okResult(
      await h.call("pubmed_find_related", { pmid: "22000011", relation: "similar", max_results: 2 }),
    );
    expect(result.records.map((r) => [r.identifier, r.peerReviewStatus])).toEqual([
      ["38000004", "preprint"],
      ["39000001", "peer-reviewed"],
    ]);
    expect(result.data).toMatchObject({ total: 3, returned: 2, hasMore: true, nextStart: 2 });
  });

  test("references with no links is an empty success with an honest warning", async () => {
    const result = okResult(
      await h.call("pubmed_find_related", { pmid: "22000011", relation: "references" }),
    );
    expect(result.records).toEqual([]);
    expect(result.data).toMatchObject({ total: 0, hasMore: false });
    expect(result.warnings[0]).toMatch(/only when PubMed Central holds the full text/);
  });

  test("an unknown article is not_found, an invalid one invalid_id", async () => {
    expect(
      errorOf(await h.call("pubmed_find_related", { pmid: "99999999", relation: "similar" })),
    ).toMatchObject({
      code: "not_found",
    });
    expect(errorOf(await h.call("pubmed_find_related", { pmid: "xyz", relation: "similar" }))).toMatchObject({
      code: "invalid_id",
    });
  });
});

describe("pubmed_prepare_paper_download", () => {
  test("a PMID with a PMC open-access copy gives HTTPS candidates (PDF first) and downloads nothing", async () => {
    const result = okResult(await h.call("pubmed_prepare_paper_download", { id: "39000001" }));
    expect(result.artifacts).toEqual([
      {
        candidateId: "pubmed:PMC9000001:pdf",
        sourceId: "pubmed",
        sourceRecordId: "PMC9000001",
        url: "https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_pdf/3f/a2/nm-30-712.PMC9000001.pdf",
        format: "pdf",
        kind: "paper",
        filename: "nm-30-712.PMC9000001.pdf",
        license: "CC BY",
      },
      {
        candidateId: "pubmed:PMC9000001:tgz",
        sourceId: "pubmed",
        sourceRecordId: "PMC9000001",
        url: "https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_package/3f/a2/PMC9000001.tar.gz",
        format: "tgz",
        kind: "paper",
        filename: "PMC9000001.tar.gz",
        license: "CC BY",
      },
    ]);
    expect(result.records[0]?.identifier).toBe("39000001");
    expect(requestsTo(OA).map((r) => r.query.id)).toEqual(["PMC9000001"]);
    expect(h.provider.requests.map((r) => r.path)).toEqual([EFETCH, OA]);
    expectUrlsOnManifestHosts(result, "pubmed");
  });

  test("a PMCID URL goes straight to the OA service", async () => {
    const result = okResult(
      await h.call("pubmed_prepare_paper_download", {
        id: "https://pmc.ncbi.nlm.nih.gov/articles/PMC9000001/",
      }),
    );
    expect(result.records[0]).toMatchObject({
      identifier: "PMC9000001",
      identifierType: "pmcid",
      title: "Nat Med. 2024 Mar 11; 30(3):712-724",
      contentScope: "metadata",
    });
    expect(h.provider.requests.map((r) => r.path)).toEqual([OA]);
    expectUrlsOnManifestHosts(result, "pubmed");
  });

  test.each([
    ["a PMCID outside the OA subset", "PMC3000011", "not_open_access"],
    ["a PMID whose PMC copy is not open access", "22000011", "not_open_access"],
    ["a PMID without a PMC copy", "39000002", "not_open_access"],
    ["an unknown PMCID", "PMC99999999", "not_found"],
    ["an unknown PMID", "99999999", "not_found"],
    ["an invalid id", "doi:10.1/x", "invalid_id"],
  ])("%s (%s) is %s", async (_name, id, code) => {
    expect(errorOf(await h.call("pubmed_prepare_paper_download", { id }))).toMatchObject({ code });
  });
});
