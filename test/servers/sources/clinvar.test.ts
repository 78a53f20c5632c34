import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { normalizeClinvarId } from "../../../src/servers/sources/clinvar/clinvar-ids.js";
import { reviewStars } from "../../../src/servers/sources/clinvar/clinvar-review-status.js";
import {
  CLINVAR_FIXTURE_QUERY,
  CLINVAR_FIXTURES,
  clinvarFakeRoutes,
} from "../../fixtures/providers/clinvar/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const ESEARCH = "/clinvar/eutils/esearch.fcgi";
const ESUMMARY = "/clinvar/eutils/esummary.fcgi";
const EFETCH = "/clinvar/eutils/efetch.fcgi";

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(clinvarFakeRoutes(), {
    only: ["clinvar"],
    env: { NCBI_EMAIL: "lab@example.org", NCBI_API_KEY: "k123" },
  });
});
afterEach(() => h.close());

const requestsTo = (p: string) => h.provider.requests.filter((r) => r.path === p);
const overLimitBody = () => readFileSync(path.join(CLINVAR_FIXTURES, "rate-limit.json"), "utf8");

describe("clinvar_search_variants", () => {
  test("returns the hits in ESearch order with classification, stars, conditions, identifiers and paging", async () => {
    const result = okResult(
      await h.call("clinvar_search_variants", { query: CLINVAR_FIXTURE_QUERY, max_results: 2 }),
    );
    const manifest = readManifest("clinvar");
    expect(result).toMatchObject({
      sourceId: "clinvar",
      toolId: "search_variants",
      attribution: manifest.governance.attribution,
      license: manifest.governance.license,
      data: { total: 3, start: 0, returned: 2, hasMore: true, nextStart: 2 },
    });
    const [first, second] = result.records;
    expect(first).toMatchObject({
      identifier: "VCV000900001",
      identifierType: "clinvar_vcv",
      title: "NM_007294.4(BRCA1):c.5000A>G (p.Asn1667Ser)",
      url: "https://www.ncbi.nlm.nih.gov/clinvar/variation/900001/",
      contentScope: "structured-record",
      fullTextRetrieved: false,
      primaryCitation: {
        // The citation opens the version that was read; the record's url stays the variation page.
        label: "[ClinVar:VCV000900001.3](https://www.ncbi.nlm.nih.gov/clinvar/VCV000900001.3/)",
        url: "https://www.ncbi.nlm.nih.gov/clinvar/VCV000900001.3/",
        version: "VCV000900001.3",
      },
      structuredData: {
        variationId: "900001",
        variantType: "single nucleotide variant",
        genes: ["BRCA1"],
        proteinChange: "N1667S, N1620S",
        molecularConsequences: ["missense variant"],
        locations: [
          { assembly: "GRCh38", chromosome: "17", start1based: 43063900, stop1based: 43063900 },
          { assembly: "GRCh37", chromosome: "17" },
        ],
        cytogeneticBands: ["17q21.31"],
        canonicalSpdi0based: "NC_000017.11:43063899:T:C",
        germline: {
          classification: "Pathogenic",
          reviewStatus: "criteria provided, multiple submitters, no conflicts",
          stars: 2,
          lastEvaluated: "2023-06-14",
          conditions: ["Hereditary breast ovarian cancer syndrome", "not provided"],
        },
        rcvAccessions: ["RCV000800001", "RCV000800002"],
        submissionCount: 3,
      },
    });
    expect(first?.structuredData).not.toHaveProperty("somaticClinicalImpact");
    expect(first?.crossReferences).toEqual([
      { identifier: "672", identifierType: "ncbi_gene", url: "https://www.ncbi.nlm.nih.gov/gene/672" },
      {
        identifier: "rs900000001",
        identifierType: "dbsnp",
        url: "https://www.ncbi.nlm.nih.gov/snp/rs900000001",
      },
      {
        identifier: "RCV000800001",
        identifierType: "clinvar_rcv",
        url: "https://www.ncbi.nlm.nih.gov/clinvar/RCV000800001/",
      },
      {
        identifier: "RCV000800002",
        identifierType: "clinvar_rcv",
        url: "https://www.ncbi.nlm.nih.gov/clinvar/RCV000800002/",
      },
    ]);
    // The pre-2024 clinical_significance field still yields the germline classification.
    expect(second?.structuredData?.germline).toEqual({
      classification: "Conflicting classifications of pathogenicity",
      reviewStatus: "criteria provided, conflicting classifications",
      stars: 1,
      lastEvaluated: "2022-01-05",
      conditions: [],
    });
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test("sends one ESearch and one ESummary, identified with tool, email and api_key", async () => {
    okResult(
      await h.call("clinvar_search_variants", { query: CLINVAR_FIXTURE_QUERY, max_results: 2, start: "" }),
    );
    expect(requestsTo(ESEARCH)[0]?.query).toMatchObject({
      db: "clinvar",
      term: CLINVAR_FIXTURE_QUERY,
      retmode: "json",
      retstart: "0",
      retmax: "2",
      tool: "sciencegate",
      email: "lab@example.org",
      api_key: "k123",
    });
    expect(requestsTo(ESUMMARY).map((r) => [r.query.db, r.query.id, r.query.retmode])).toEqual([
      ["clinvar", "900001,900002", "json"],
    ]);
  });

  test("an empty result is a success with total 0, no ESummary, and a warning for unmatched phrases", async () => {
    const result = okResult(await h.call("clinvar_search_variants", { query: "zzqxv" }));
    expect(result.records).toEqual([]);
    expect(result.data).toEqual({
      total: 0,
      start: 0,
      returned: 0,
      hasMore: false,
      droppedPhrases: ["zzqxv"],
    });
    expect(result.warnings).toEqual(['ClinVar found nothing for "zzqxv" and dropped it from the query.']);
    expect(requestsTo(ESUMMARY)).toHaveLength(0);
  });

  test("429 comes back as rate_limited with retryAfterMs; the next call succeeds", async () => {
    h.provider.setFault({ path: ESEARCH }, { status: 429, retryAfter: "3", body: overLimitBody() });
    expect(errorOf(await h.call("clinvar_search_variants", { query: CLINVAR_FIXTURE_QUERY }))).toMatchObject({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 3000,
    });
    const second = okResult(await h.call("clinvar_search_variants", { query: CLINVAR_FIXTURE_QUERY }));
    expect(second.records).toHaveLength(2);
  });

  test.each([
    ["a 503 of ESearch", ESEARCH, { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    [
      "a malformed ESummary",
      ESUMMARY,
      { malformed: true as const },
      { code: "upstream_unavailable", status: 200 },
    ],
    ["NCBI's over-limit body with HTTP 200", ESUMMARY, { status: 200, body: "" }, { code: "rate_limited" }],
  ])("%s is a structured error that does not echo the query", async (_name, where, fault, expected) => {
    const injected = "body" in fault ? { ...fault, body: overLimitBody() } : fault;
    h.provider.setFault({ path: where }, injected);
    const error = errorOf(await h.call("clinvar_search_variants", { query: CLINVAR_FIXTURE_QUERY }));
    expect(error).toMatchObject(expected);
    expect(error.message).not.toContain("BRCA1");
  });
});

describe("clinvar_lookup_accession", () => {
  test.each([
    "VCV000900001",
    "vcv900001",
    "900001",
    "ClinVar:VCV000900001",
    "https://www.ncbi.nlm.nih.gov/clinvar/variation/900001/?redir=vcv",
  ])("%s is the VCV000900001 summary", async (accession) => {
    const result = okResult(await h.call("clinvar_lookup_accession", { accession }));
    expect(result.records.map((r) => r.identifier)).toEqual(["VCV000900001"]);
    expect(result.data).toEqual({ accession: "VCV000900001", variationId: "900001" });
    expect(result.warnings).toEqual([]);
    expect(requestsTo(ESUMMARY).map((r) => r.query.id)).toEqual(["900001"]);
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test("an older version asked for is answered with the current one and a warning", async () => {
    const result = okResult(await h.call("clinvar_lookup_accession", { accession: "VCV000900001.2" }));
    expect(result.warnings).toEqual([
      "Version 2 of VCV000900001 was asked for; ClinVar serves the current version 3.",
    ]);
  });

  test("a somatic-only variation reports its clinical impact, not a germline classification", async () => {
    const [record] = okResult(await h.call("clinvar_lookup_accession", { accession: "900003" })).records;
    expect(record?.structuredData).toMatchObject({
      somaticClinicalImpact: {
        classification: "Tier I - Strong",
        stars: 1,
        conditions: ["Lung adenocarcinoma"],
      },
    });
    expect(record?.structuredData).not.toHaveProperty("germline");
  });

  test("an RCV accession is read from its ClinVarSet document", async () => {
    const result = okResult(await h.call("clinvar_lookup_accession", { accession: "RCV000800001.4" }));
    expect(result.records[0]).toMatchObject({
      identifier: "RCV000800001",
      identifierType: "clinvar_rcv",
      title: "NM_007294.4(BRCA1):c.5000A>G (p.Asn1667Ser) AND Hereditary breast ovarian cancer syndrome",
      url: "https://www.ncbi.nlm.nih.gov/clinvar/RCV000800001/",
      contentScope: "structured-record",
      primaryCitation: { version: "RCV000800001.4" },
      crossReferences: [
        {
          identifier: "VCV000900001",
          identifierType: "clinvar_vcv",
          url: "https://www.ncbi.nlm.nih.gov/clinvar/variation/900001/",
        },
        {
          identifier: "rs900000001",
          identifierType: "dbsnp",
          url: "https://www.ncbi.nlm.nih.gov/snp/rs900000001",
        },
        {
          identifier: "C9000001",
          identifierType: "medgen",
          url: "https://www.ncbi.nlm.nih.gov/medgen/C9000001",
        },
      ],
      structuredData: { variationId: "900001", conditions: ["Hereditary breast ovarian cancer syndrome"] },
    });
    expect(result.data?.classifications).toEqual([
      {
        type: "germline",
        classification: "Pathogenic",
        reviewStatus: "criteria provided, multiple submitters, no conflicts",
        stars: 2,
        lastEvaluated: "2023-06-14",
        descriptions: [
          {
            description: "Pathogenic",
            lastEvaluated: "2023-06-14",
            reviewStatus: "criteria provided, multiple submitters, no conflicts",
            stars: 2,
            submissionCount: 2,
            // A germline aggregate is made of every germline submission of its RCV (ClinVar counts 2).
            submissions: ["SCV009000011", "SCV009000012"],
          },
        ],
        conditions: ["Hereditary breast ovarian cancer syndrome"],
      },
    ]);
    expect(result.warnings).toEqual([]);
    expect(requestsTo(EFETCH).map((r) => [r.query.rettype, r.query.id])).toEqual([
      ["clinvarset", "RCV000800001"],
    ]);
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test.each([
    ["an unknown variation", "VCV000999999"],
    ["an unknown RCV", "RCV000999999"],
  ])("%s is not_found", async (_name, accession) => {
    expect(errorOf(await h.call("clinvar_lookup_accession", { accession }))).toMatchObject({
      code: "not_found",
    });
  });

  test.each([
    "SCV009000011",
    "rs900000001",
    "BRCA1 pathogenic variant",
    "https://example.org/clinvar/variation/1/",
  ])("%s is invalid_id, without any provider request and without echoing free text", async (accession) => {
    const error = errorOf(await h.call("clinvar_lookup_accession", { accession }));
    expect(error.code).toBe("invalid_id");
    expect(error.message).not.toContain("BRCA1 pathogenic");
    expect(h.provider.requests).toHaveLength(0);
  });
});

describe("clinvar_get_assertions", () => {
  test("a VCV gives its aggregate classification with stars and a page of submissions", async () => {
    const result = okResult(
      await h.call("clinvar_get_assertions", { accession: "VCV000900001", max_results: 2 }),
    );
    expect(result.records[0]).toMatchObject({
      identifier: "VCV000900001",
      url: "https://www.ncbi.nlm.nih.gov/clinvar/variation/900001/",
      primaryCitation: { version: "VCV000900001.3" },
      structuredData: { recordType: "classified", genes: ["BRCA1"], submissionCount: 3 },
    });
    expect(result.data).toMatchObject({
      accession: "VCV000900001",
      variationId: "900001",
      classifications: [
        {
          type: "germline",
          classification: "Pathogenic",
          reviewStatus: "criteria provided, multiple submitters, no conflicts",
          stars: 2,
          lastEvaluated: "2023-06-14",
          submissionCount: 3,
          conditions: ["Hereditary breast ovarian cancer syndrome"],
        },
      ],
      total: 3,
      start: 0,
      returned: 2,
      hasMore: true,
      nextStart: 2,
    });
    // Each RCV (variant-condition pair) keeps its own classification: the OMIM-named one is 0 stars, not 2.
    expect(result.data?.rcvClassifications).toMatchObject([
      { accession: "RCV000800001", classifications: [{ classification: "Pathogenic", stars: 2 }] },
      { accession: "RCV000800002", classifications: [{ classification: "Pathogenic", stars: 0 }] },
    ]);
    expect(result.data?.submissions).toEqual([
      {
        accession: "SCV009000011",
        version: "2",
        submitter: "Example Genomics Laboratory",
        type: "germline",
        classification: "Pathogenic",
        conditionCodes: [],
        reviewStatus: "criteria provided, single submitter",
        stars: 1,
        lastEvaluated: "2023-06-14",
        submitted: "2023-06-20",
        conditions: ["Hereditary breast ovarian cancer syndrome"],
        rcvAccession: "RCV000800001",
        origins: ["germline"],
        methods: ["clinical testing"],
        pubmedIds: ["39000001"],
      },
      // Its trait is only a MedGen xref; the name comes from ClinVar's trait mapping.
      expect.objectContaining({
        accession: "SCV009000012",
        classification: "Likely pathogenic",
        conditions: ["Hereditary breast ovarian cancer syndrome"],
      }),
    ]);
    expect(requestsTo(EFETCH).map((r) => [r.query.rettype, r.query.id, r.query.retmode])).toEqual([
      ["vcv", "VCV000900001", "xml"],
    ]);
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test("the next page holds the literature submission with no assertion criteria (0 stars)", async () => {
    const result = okResult(await h.call("clinvar_get_assertions", { accession: "900001", start: 2 }));
    expect(result.data).toMatchObject({ total: 3, start: 2, returned: 1, hasMore: false });
    expect(result.data?.submissions).toEqual([
      expect.objectContaining({
        accession: "SCV009000013",
        stars: 0,
        reviewStatus: "no assertion criteria provided",
        methods: ["literature only"],
        pubmedIds: ["39000002", "39000003"],
        conditions: ["BREAST-OVARIAN CANCER, FAMILIAL, SUSCEPTIBILITY TO, 1"],
      }),
    ]);
  });

  test("somatic clinical impact keeps its assertion type and significance", async () => {
    const result = okResult(await h.call("clinvar_get_assertions", { accession: "VCV000900003" }));
    expect(result.data?.classifications).toEqual([
      expect.objectContaining({
        type: "somatic_clinical_impact",
        classification: "Tier I - Strong",
        stars: 1,
      }),
    ]);
    expect(result.data?.submissions).toEqual([
      expect.objectContaining({
        type: "somatic_clinical_impact",
        assertionType: "therapeutic",
        significance: "resistance",
        origins: ["somatic"],
      }),
    ]);
  });

  test("a variation only included in other records is a success that says it has no classification", async () => {
    const result = okResult(await h.call("clinvar_get_assertions", { accession: "VCV000900004" }));
    expect(result.records[0]).toMatchObject({
      identifier: "VCV000900004",
      warnings: [
        "This variation is only part of other ClinVar records and has no classification of its own.",
      ],
      structuredData: { recordType: "included", classifications: [] },
    });
    expect(result.data).toMatchObject({ classifications: [], total: 0, submissions: [] });
    expect(result.warnings).toEqual(["ClinVar lists no submissions for this record."]);
  });

  test("an RCV gives the submissions of that variant-condition pair", async () => {
    const result = okResult(await h.call("clinvar_get_assertions", { accession: "RCV000800001" }));
    expect(result.records[0]?.identifier).toBe("RCV000800001");
    expect(
      (
        result.data?.submissions as { accession: string; submitter: string; submitted: string }[] | undefined
      )?.map((s) => [s.accession, s.submitter, s.submitted]),
    ).toEqual([
      ["SCV009000011", "Example Genomics Laboratory", "2023-06-20"],
      ["SCV009000012", "Invented Diagnostics", "2024-04-20"],
    ]);
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test.each([
    ["an unknown VCV", "not_found", "VCV000999999"],
    ["an HGVS expression", "invalid_id", "NM_007294.4:c.5000A>G"],
  ])("%s is %s", async (_name, code, accession) => {
    expect(errorOf(await h.call("clinvar_get_assertions", { accession }))).toMatchObject({ code });
  });

  test("a 502 of EFetch is upstream_unavailable with its status", async () => {
    h.provider.setFault({ path: EFETCH }, { status: 502 });
    expect(errorOf(await h.call("clinvar_get_assertions", { accession: "900001" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 502,
    });
  });
});

describe("ClinVar identifiers and review stars", () => {
  test.each([
    ["VCV000012345.3", { kind: "variation", variationId: "12345", accession: "VCV000012345", version: 3 }],
    ["rcv12345", { kind: "rcv", accession: "RCV000012345" }],
    ["VariationID: 12345", { kind: "variation", variationId: "12345", accession: "VCV000012345" }],
    [
      "https://www.ncbi.nlm.nih.gov/clinvar/RCV000012345.2/",
      { kind: "rcv", accession: "RCV000012345", version: 2 },
    ],
    ["0", undefined],
    ["VCV1234567890", undefined],
    ["https://www.ncbi.nlm.nih.gov/gene/672", undefined],
  ])("%s → %o", (input, expected) => {
    expect(normalizeClinvarId(input)).toEqual(expected);
  });

  test.each([
    ["practice guideline", 4],
    ["reviewed by expert panel", 3],
    ["criteria provided, multiple submitters, no conflicts", 2],
    ["criteria provided, multiple submitters", 2],
    ["criteria provided, conflicting classifications", 1],
    ["Criteria provided,  single submitter", 1],
    ["no assertion criteria provided", 0],
    ["no classification provided", 0],
    ["flagged submission", 0],
    ["something new", undefined],
  ])("%s is %s star(s)", (status, stars) => {
    expect(reviewStars(status)).toBe(stars);
  });
});
