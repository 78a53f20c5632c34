import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { REACTOME_FIXTURE_QUERY, reactomeFakeRoutes } from "../../fixtures/providers/reactome/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const SEARCH = "/reactome/content/search/query";
const ANALYSIS = "/reactome/analysis/identifiers/projection";
const RAF_URL = "https://reactome.org/content/detail/R-HSA-5673001";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(reactomeFakeRoutes(), { only: ["reactome"] });
});
afterEach(() => h.close());

describe("reactome_search_pathways", () => {
  test("returns pathway hits as plain-text metadata records with paging", async () => {
    const result = okResult(
      await h.call("reactome_search_pathways", {
        query: REACTOME_FIXTURE_QUERY,
        max_results: 2,
        species: "",
      }),
    );
    const manifest = readManifest("reactome");
    expect(result).toMatchObject({
      sourceId: "reactome",
      toolId: "search_pathways",
      license: "CC-BY-4.0",
      attribution: manifest.governance.attribution,
      warnings: [],
      data: { total: 23, species: "Homo sapiens", start: 0, returned: 2, hasMore: true, nextStart: 2 },
    });
    expect(result.records[0]).toMatchObject({
      identifier: "R-HSA-5683057",
      identifierType: "reactome",
      title: "MAPK family signaling cascades",
      url: "https://reactome.org/content/detail/R-HSA-5683057",
      contentScope: "metadata",
      primaryCitation: {
        label: "[Reactome:R-HSA-5683057](https://reactome.org/content/detail/R-HSA-5683057)",
      },
      structuredData: {
        species: ["Homo sapiens"],
        type: "TopLevelPathway",
        isDisease: false,
        summary:
          "The mitogen activated protein kinases (MAPKs) are a family of conserved protein serine/threonine kinases & their activators.",
        compartments: ["cytosol", "plasma membrane"],
      },
    });
    expect(result.records[1]).toMatchObject({
      title: "Oncogenic MAPK signaling",
      structuredData: {
        isDisease: true,
        summary: "Activating mutations in RAS and RAF\n\ndrive oncogenic signalling.",
      },
    });
    expect(result.records[0]?.abstract).toBeUndefined();
    expect(h.provider.requests[0]?.query).toEqual({
      query: REACTOME_FIXTURE_QUERY,
      species: "Homo sapiens",
      types: "Pathway",
      cluster: "true",
      start: "0",
      rows: "2",
    });
    expectUrlsOnManifestHosts(result, "reactome");
  });

  test('species "all" searches every species', async () => {
    okResult(
      await h.call("reactome_search_pathways", { query: REACTOME_FIXTURE_QUERY, species: "all", start: 2 }),
    );
    expect(h.provider.requests[0]?.query).not.toHaveProperty("species");
    expect(h.provider.requests[0]?.query).toMatchObject({ start: "2" });
  });

  test("Reactome's HTTP 404 for a search without hits is an empty success", async () => {
    const result = okResult(await h.call("reactome_search_pathways", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({ total: 0, species: "Homo sapiens", start: 0, returned: 0, hasMore: false });
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried; the next call succeeds", async () => {
    h.provider.setFault({ path: SEARCH }, { status: 429, retryAfter: "5" });
    expect(errorOf(await h.call("reactome_search_pathways", { query: REACTOME_FIXTURE_QUERY }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 5000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(
      okResult(await h.call("reactome_search_pathways", { query: REACTOME_FIXTURE_QUERY })).records,
    ).toHaveLength(2);
  });

  test.each([
    ["a 500", { status: 500 }, { code: "upstream_unavailable", status: 500 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
    ["JSON without results", { status: 200, body: '{"unexpected":true}' }, { code: "upstream_unavailable" }],
  ])("%s is a structured error that does not echo the query", async (_name, fault, expected) => {
    h.provider.setFault({ path: SEARCH }, fault);
    const error = errorOf(await h.call("reactome_search_pathways", { query: REACTOME_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain("MAPK");
  });
});

describe("reactome_lookup_pathway", () => {
  test("gives the curated pathway with summary, authors, GO process, literature, DOI and sub-events", async () => {
    const result = okResult(await h.call("reactome_lookup_pathway", { id: "R-HSA-5673001" }));
    expect(h.provider.requests[0]?.path).toBe("/reactome/content/data/query/R-HSA-5673001");
    expect(result.warnings).toEqual([]);
    expect(result.data).toEqual({ id: "R-HSA-5673001", version: "4" });
    const [record] = result.records;
    expect(record).toMatchObject({
      identifier: "R-HSA-5673001",
      identifierType: "reactome",
      title: "RAF/MAP kinase cascade",
      url: RAF_URL,
      authors: ["Rothfels, Karen"],
      year: 2015,
      contentScope: "structured-record",
      peerReviewStatus: "peer-reviewed",
      // The label names no version: its link always shows the current release.
      primaryCitation: { label: `[Reactome:R-HSA-5673001](${RAF_URL})`, url: RAF_URL, version: "4" },
      crossReferences: [
        {
          identifier: "10.3180/R-HSA-5673001.1",
          identifierType: "doi",
          url: "https://doi.org/10.3180/R-HSA-5673001.1",
        },
        {
          identifier: "GO:0000165",
          identifierType: "go",
          url: "https://www.ebi.ac.uk/QuickGO/term/GO:0000165",
        },
        { identifier: "24985577", identifierType: "pmid", url: "https://pubmed.ncbi.nlm.nih.gov/24985577/" },
      ],
      structuredData: {
        type: "Pathway",
        version: "4",
        species: "Homo sapiens",
        summary:
          "The RAS-RAF-MEK-ERK pathway regulates proliferation, differentiation & survival. GTP-bound RAS recruits RAF.\n\n" +
          "Activating mutations in RAS are found in about one third of human cancers.",
        releaseDate: "2015-06-24",
        isInDisease: false,
        compartments: ["cytosol"],
        reviewers: ["Roskoski, Robert Jr"],
        subEvents: [
          { stId: "R-HSA-5673000", name: "RAF activation", type: "Pathway" },
          { stId: "R-HSA-5672965", name: "MEK1/2 phosphorylate ERK1/2 & activate them", type: "Reaction" },
        ],
      },
    });
    expect(record?.abstract).toBeUndefined();
    expectUrlsOnManifestHosts(result, "reactome");
  });

  test.each([
    ["a versioned id in lower case", "r-hsa-5673001.4"],
    ["a reactome: prefix", "reactome:R-HSA-5673001"],
    ["a detail page URL", RAF_URL],
    ["a pathway browser URL", "https://reactome.org/PathwayBrowser/#/R-HSA-5673001&SEL=R-HSA-5672965"],
    ["a database id", "5673001"],
  ])("accepts %s", async (_name, id) => {
    const result = okResult(await h.call("reactome_lookup_pathway", { id }));
    expect(result.records[0]?.identifier).toBe("R-HSA-5673001");
    expect(result.warnings).toEqual([]);
  });

  test("an older version is answered with the current one and a warning", async () => {
    const result = okResult(await h.call("reactome_lookup_pathway", { id: "R-HSA-5673001.2" }));
    expect(h.provider.requests[0]?.path).toBe("/reactome/content/data/query/R-HSA-5673001");
    expect(result.warnings).toEqual([
      "R-HSA-5673001.2 was asked for; Reactome serves only the current release, where it is R-HSA-5673001.4.",
    ]);
  });

  test("an unknown id is not_found", async () => {
    expect(errorOf(await h.call("reactome_lookup_pathway", { id: "R-HSA-999999" }))).toMatchObject({
      code: "not_found",
      status: 404,
    });
  });

  test("an object that is not an event (a protein) is invalid_id", async () => {
    expect(errorOf(await h.call("reactome_lookup_pathway", { id: "R-HSA-879796" }))).toMatchObject({
      code: "invalid_id",
      message: "R-HSA-879796 is a Reactome EntityWithAccessionedSequence, not a pathway or reaction.",
    });
  });

  test.each([["MAPK pathway"], ["R-HSA-"], ["https://example.org/R-HSA-5673001"]])(
    "%s is invalid_id without a provider request",
    async (id) => {
      const error = errorOf(await h.call("reactome_lookup_pathway", { id }));
      expect(error.code).toBe("invalid_id");
      expect(error.message).not.toContain("MAPK pathway");
      expect(h.provider.requests).toHaveLength(0);
    },
  );

  test("a 503 is upstream_unavailable", async () => {
    h.provider.setFault({ path: /data\/query/ }, { status: 503 });
    expect(errorOf(await h.call("reactome_lookup_pathway", { id: "R-HSA-5673001" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 503,
    });
  });
});

describe("reactome_enrichment", () => {
  test("posts the identifiers and returns enriched pathways with statistics, failures and paging", async () => {
    const result = okResult(
      await h.call("reactome_enrichment", {
        identifiers: ["BRAF", "MAP2K1", "braf", "NotAGene1", "bad id!", "KRAS"],
        max_results: 2,
      }),
    );
    const [analysis, notFound] = h.provider.requests;
    expect(analysis).toMatchObject({
      method: "POST",
      path: ANALYSIS,
      body: "BRAF\nMAP2K1\nNotAGene1\nKRAS\n",
    });
    expect(analysis?.headers["content-type"]).toBe("text/plain");
    expect(analysis?.query).toEqual({
      interactors: "false",
      includeDisease: "true",
      pageSize: "2",
      page: "1",
      sortBy: "ENTITIES_PVALUE",
      order: "ASC",
      resource: "TOTAL",
    });
    expect(notFound?.path).toBe("/reactome/analysis/token/MjAyNTAxMDExMjAwMDBfMQ%3D%3D/notFound");
    expect(result.data).toEqual({
      total: 3,
      page: 1,
      returned: 2,
      hasMore: true,
      nextPage: 2,
      submitted: 4,
      identifiersNotFound: 1,
      failed: [
        { id: "bad id!", reason: "invalid_id" },
        { id: "NotAGene1", reason: "not_found" },
      ],
      projectedToHuman: true,
      analysisToken: "MjAyNTAxMDExMjAwMDBfMQ%3D%3D",
      analysisUrl: "https://reactome.org/PathwayBrowser/#/DTAB=AN&ANALYSIS=MjAyNTAxMDExMjAwMDBfMQ%3D%3D",
    });
    expect(result.warnings).toEqual(["2 of 6 identifier(s) failed; see data.failed."]);
    expect(result.records.map((r) => r.identifier)).toEqual(["R-HSA-5673001", "R-HSA-6802957"]);
    expect(result.records[0]).toMatchObject({
      title: "RAF/MAP kinase cascade",
      url: RAF_URL,
      contentScope: "analysis-result",
      structuredData: {
        species: "Homo sapiens",
        isInDisease: false,
        isLowestLevel: false,
        entities: { found: 4, total: 285, ratio: 0.0187, pValue: 2.1e-7, fdr: 4.3e-5 },
        reactions: { found: 21, total: 63, ratio: 0.0044 },
      },
    });
    expectUrlsOnManifestHosts(result, "reactome");
  });

  test("the last page has no nextPage; the p-value threshold and options are sent", async () => {
    const result = okResult(
      await h.call("reactome_enrichment", {
        identifiers: ["P15056"],
        max_results: 2,
        page: 2,
        project_to_human: false,
        include_interactors: true,
        include_disease: false,
        p_value_max: 0.5,
      }),
    );
    expect(h.provider.requests[0]).toMatchObject({ path: "/reactome/analysis/identifiers/" });
    expect(h.provider.requests[0]?.query).toMatchObject({
      interactors: "true",
      includeDisease: "false",
      pValue: "0.5",
      page: "2",
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(result.data).toMatchObject({
      total: 3,
      page: 2,
      returned: 1,
      hasMore: false,
      projectedToHuman: false,
    });
    expect(result.data).not.toHaveProperty("nextPage");
    expect(result.records.map((r) => r.identifier)).toEqual(["R-HSA-162582"]);
  });

  test("a threshold no pathway meets is an empty success", async () => {
    const result = okResult(
      await h.call("reactome_enrichment", { identifiers: ["BRAF"], p_value_max: 1e-9 }),
    );
    expect(result.records).toEqual([]);
    expect(result.data).toMatchObject({ total: 0, returned: 0, hasMore: false, failed: [] });
  });

  test("identifiers Reactome recognises none of are not_found (its HTTP 404)", async () => {
    const error = errorOf(await h.call("reactome_enrichment", { identifiers: ["NOTAGENE1", "NOTAGENE2"] }));
    expect(error).toMatchObject({ code: "not_found", status: 404 });
    expect(error.message).not.toContain("NOTAGENE");
  });

  test("a 200 answer that recognises nothing is not_found too, never an empty success", async () => {
    const body = JSON.stringify({
      summary: { token: "T1" },
      identifiersNotFound: 1,
      pathwaysFound: 0,
      pathways: [],
    });
    h.provider.setFault({ path: ANALYSIS }, { status: 200, body });
    expect(errorOf(await h.call("reactome_enrichment", { identifiers: ["NOTAGENE1"] }))).toMatchObject({
      code: "not_found",
    });
  });

  test("only malformed identifiers is invalid_id without a provider request", async () => {
    expect(errorOf(await h.call("reactome_enrichment", { identifiers: ["two words", "a,b"] }))).toMatchObject(
      {
        code: "invalid_id",
      },
    );
    expect(h.provider.requests).toHaveLength(0);
  });

  test("429 then success; a 502 is upstream_unavailable", async () => {
    h.provider.setFault({ path: ANALYSIS }, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call("reactome_enrichment", { identifiers: ["BRAF"] }))).toMatchObject({
      code: "rate_limited",
      retryAfterMs: 2000,
    });
    expect(okResult(await h.call("reactome_enrichment", { identifiers: ["BRAF"] })).records).toHaveLength(3);
    h.provider.setFault({ path: ANALYSIS }, { status: 502 });
    expect(errorOf(await h.call("reactome_enrichment", { identifiers: ["BRAF"] }))).toMatchObject({
      code: "upstream_unavailable",
      status: 502,
    });
  });
});
