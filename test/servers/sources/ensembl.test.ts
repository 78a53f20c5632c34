import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ensemblFakeRoutes } from "../../fixtures/providers/ensembl/routes.js";
import {
  errorOf,
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  type SourcesHarness,
  startSourcesHarness,
} from "./sources-harness.js";

const BRAF = "ENSG00000157764";
const BRAF_URL = "https://www.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764";
const LOOKUP = /^\/ensembl\/rest\/lookup\//;

let h: SourcesHarness;
beforeEach(async () => {
  h = await startSourcesHarness(ensemblFakeRoutes(), { only: ["ensembl"] });
});
afterEach(() => h.close());

describe("ensembl_lookup_gene", () => {
  test("a gene id gives a structured record with location, HGNC id, canonical transcript and transcripts", async () => {
    const result = okResult(await h.call("ensembl_lookup_gene", { gene: BRAF, species: "" }));
    const manifest = readManifest("ensembl");
    expect(result).toMatchObject({
      sourceId: "ensembl",
      toolId: "lookup_gene",
      attribution: manifest.governance.attribution,
      license: manifest.governance.license,
      warnings: [],
      data: { species: "homo_sapiens", lookedUpBy: "id" },
    });
    const [record, ...rest] = result.records;
    expect(rest).toEqual([]);
    expect(record).toMatchObject({
      identifier: BRAF,
      identifierType: "ensembl_gene",
      title: "BRAF: B-Raf proto-oncogene, serine/threonine kinase",
      url: BRAF_URL,
      contentScope: "structured-record",
      fullTextRetrieved: false,
      primaryCitation: {
        // The link shows the current release, so the label names no version; the version read is `version`.
        label: `[Ensembl:ENSG00000157764](${BRAF_URL})`,
        url: BRAF_URL,
        version: "14",
      },
      crossReferences: [
        {
          identifier: "HGNC:1097",
          identifierType: "hgnc",
          url: "https://www.genenames.org/data/gene-symbol-report/#!/hgnc_id/HGNC:1097",
        },
        {
          identifier: "ENST00000646891",
          identifierType: "ensembl_transcript",
          url: "https://www.ensembl.org/Homo_sapiens/Transcript/Summary?t=ENST00000646891",
        },
      ],
      structuredData: {
        symbol: "BRAF",
        biotype: "protein_coding",
        species: "homo_sapiens",
        location: { seqRegion: "7", start: 140719337, end: 140924929, strand: -1, assembly: "GRCh38" },
        canonicalTranscript: "ENST00000646891.2",
        transcriptCount: 2,
      },
    });
    expect(record?.abstract).toBeUndefined();
    expect(record?.structuredData?.transcripts).toEqual([
      {
        id: "ENST00000646891",
        version: 2,
        name: "BRAF-220",
        biotype: "protein_coding",
        isCanonical: true,
        start: 140719337,
        end: 140924929,
        exonCount: 2,
        translation: { id: "ENSP00000493543", length: 766, start: 140726494, end: 140924703 },
      },
      {
        id: "ENST00000479537",
        version: 6,
        name: "BRAF-203",
        biotype: "retained_intron",
        isCanonical: false,
        start: 140781580,
        end: 140800558,
        exonCount: 1,
      },
    ]);
    const [request] = h.provider.requests;
    expect(request?.path).toBe(`/ensembl/rest/lookup/id/${BRAF}`);
    expect(request?.query).toEqual({ expand: "1" });
    expect(request?.headers.accept).toBe("application/json");
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test.each([
    ["a versioned id", "ENSG00000157764.14"],
    ["an ensembl: prefix", "ensembl:ENSG00000157764"],
    ["lower case", "ensg00000157764"],
    ["a gene page URL", BRAF_URL],
    ["a stable-id URL", "https://www.ensembl.org/id/ENSG00000157764"],
  ])("accepts %s", async (_name, gene) => {
    const result = okResult(await h.call("ensembl_lookup_gene", { gene }));
    expect(result.records.map((r) => r.identifier)).toEqual([BRAF]);
    expect(h.provider.requests[0]?.path).toBe(`/ensembl/rest/lookup/id/${BRAF}`);
  });

  test("an older version is answered with the current one and a warning", async () => {
    const result = okResult(await h.call("ensembl_lookup_gene", { gene: "ENSG00000157764.13" }));
    expect(result.records[0]?.primaryCitation.version).toBe("14");
    expect(result.warnings).toEqual([
      "ENSG00000157764.13 was asked for; Ensembl serves only the current release, where it is ENSG00000157764.14.",
    ]);
  });

  test("a symbol is looked up in the requested species (common names honoured), without transcripts", async () => {
    const result = okResult(
      await h.call("ensembl_lookup_gene", { gene: "Braf", species: "mouse", include_transcripts: false }),
    );
    expect(h.provider.requests[0]?.path).toBe("/ensembl/rest/lookup/symbol/mus_musculus/Braf");
    expect(h.provider.requests[0]?.query).toEqual({ expand: "0" });
    expect(result.data).toEqual({ species: "mus_musculus", lookedUpBy: "symbol" });
    expect(result.records[0]).toMatchObject({
      identifier: "ENSMUSG00000002413",
      url: "https://www.ensembl.org/Mus_musculus/Gene/Summary?g=ENSMUSG00000002413",
      crossReferences: [
        { identifier: "MGI:88190", identifierType: "mgi" },
        { identifier: "ENSMUST00000002487", identifierType: "ensembl_transcript" },
      ],
      structuredData: { species: "mus_musculus", location: { assembly: "GRCm39" } },
    });
    expect(result.records[0]?.crossReferences[0]?.url).toBeUndefined();
    expect(result.records[0]?.structuredData?.transcripts).toBeUndefined();
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test("an answer naming the species by alias still links to the species' production-name pages", async () => {
    const gene = { id: BRAF, object_type: "Gene", species: "human", display_name: "BRAF", version: 14 };
    h.provider.setFault({ path: LOOKUP }, { status: 200, body: JSON.stringify(gene) });
    const result = okResult(await h.call("ensembl_lookup_gene", { gene: "BRAF", species: "human" }));
    expect(result.records[0]?.url).toBe(BRAF_URL);
    expect(result.data).toMatchObject({ species: "homo_sapiens" });
  });

  test("a symbol without species is looked up in human", async () => {
    okResult(await h.call("ensembl_lookup_gene", { gene: "BRAF" }));
    expect(h.provider.requests[0]?.path).toBe("/ensembl/rest/lookup/symbol/homo_sapiens/BRAF");
  });

  test.each([
    ["an unknown id", { gene: "ENSG00000999999" }],
    ["an unknown symbol", { gene: "NOTAGENE9" }],
    ["a human id asked for in mouse", { gene: BRAF, species: "Mus musculus" }],
  ])("%s is not_found (Ensembl's HTTP 400), without echoing the input", async (_name, args) => {
    const error = errorOf(await h.call("ensembl_lookup_gene", args));
    expect(error).toMatchObject({ code: "not_found", status: 400 });
    expect(error.message).not.toContain(String(args.gene === BRAF ? "Mus musculus" : "NOTAGENE9"));
  });

  test("the species is sent with an id lookup and checked against the answer", async () => {
    errorOf(await h.call("ensembl_lookup_gene", { gene: BRAF, species: "mouse" }));
    expect(h.provider.requests[0]?.query).toEqual({ expand: "1", species: "mus_musculus" });
  });

  test("an answer of another species than requested is not_found, even if Ensembl ignored the parameter", async () => {
    const mouse = {
      id: "ENSMUSG00000002413",
      object_type: "Gene",
      species: "mus_musculus",
      display_name: "Braf",
    };
    h.provider.setFault({ path: LOOKUP }, { status: 200, body: JSON.stringify(mouse) });
    const error = errorOf(
      await h.call("ensembl_lookup_gene", { gene: "ENSMUSG00000002413", species: "human" }),
    );
    expect(error).toMatchObject({ code: "not_found" });
    expect(error.message).toContain("belongs to mus_musculus");
  });

  test.each([
    ["a malformed stable id", "ENSG123", "invalid_id"],
    ["a transcript id", "ENST00000646891", "invalid_id"],
    ["free text", "the BRAF gene please", "invalid_id"],
    ["a URL of another site", "https://www.ensembl.org/Homo_sapiens/Info/Index", "invalid_id"],
  ])("%s is %s, without a provider request", async (_name, gene, code) => {
    const error = errorOf(await h.call("ensembl_lookup_gene", { gene }));
    expect(error.code).toBe(code);
    expect(error.message).not.toContain("please");
    expect(h.provider.requests).toHaveLength(0);
  });

  test("a malformed species is invalid_input before any request; an unknown one after Ensembl rejects it", async () => {
    expect(
      errorOf(await h.call("ensembl_lookup_gene", { gene: "BRAF", species: "h0mo sap!ens" })),
    ).toMatchObject({
      code: "invalid_input",
    });
    expect(h.provider.requests).toHaveLength(0);
    expect(errorOf(await h.call("ensembl_lookup_gene", { gene: "BRAF", species: "martian" }))).toMatchObject({
      code: "invalid_input",
      status: 400,
      message: "Ensembl does not know the requested species.",
    });
  });

  test("429 comes back as rate_limited with retryAfterMs and is not retried; the next call succeeds", async () => {
    h.provider.setFault({ path: LOOKUP }, { status: 429, retryAfter: "2" });
    expect(errorOf(await h.call("ensembl_lookup_gene", { gene: BRAF }))).toEqual({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 2000,
      message: expect.any(String),
    });
    expect(h.provider.requests).toHaveLength(1);
    expect(okResult(await h.call("ensembl_lookup_gene", { gene: BRAF })).records).toHaveLength(1);
  });

  test.each([
    ["a 503", { status: 503 }, { code: "upstream_unavailable", status: 503 }],
    ["a malformed body", { malformed: true as const }, { code: "upstream_unavailable", status: 200 }],
  ])("%s is a structured upstream error, never an empty success", async (_name, fault, expected) => {
    h.provider.setFault({ path: LOOKUP }, fault);
    expect(errorOf(await h.call("ensembl_lookup_gene", { gene: "BRAF" }))).toMatchObject(expected);
  });
});

describe("ensembl_lookup_transcript", () => {
  test("gives exons, translation, canonical flag and the parent gene", async () => {
    const result = okResult(await h.call("ensembl_lookup_transcript", { transcript: "ENST00000646891.2" }));
    expect(h.provider.requests[0]?.query).toEqual({ expand: "1" });
    expect(result.warnings).toEqual([]);
    expect(result.records[0]).toMatchObject({
      identifier: "ENST00000646891",
      identifierType: "ensembl_transcript",
      title: "BRAF-220: protein coding transcript of ENSG00000157764",
      url: "https://www.ensembl.org/Homo_sapiens/Transcript/Summary?t=ENST00000646891",
      contentScope: "structured-record",
      primaryCitation: { label: expect.stringMatching(/^\[Ensembl:ENST00000646891\]\(/), version: "2" },
      crossReferences: [
        { identifier: BRAF, identifierType: "ensembl_gene", url: BRAF_URL },
        { identifier: "ENSP00000493543", identifierType: "ensembl_protein" },
      ],
      structuredData: {
        isCanonical: true,
        gene: BRAF,
        translation: { id: "ENSP00000493543", length: 766 },
        exonCount: 2,
        exons: [
          { id: "ENSE00003828230", seqRegion: "7", start: 140924566, end: 140924929, strand: -1 },
          { id: "ENSE00001035295", seqRegion: "7", start: 140753275, end: 140753393, strand: -1 },
        ],
      },
    });
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test.each([
    ["an unknown transcript", "ENST00000999999", "not_found"],
    ["a gene id", BRAF, "invalid_id"],
    ["not an id", "BRAF-220", "invalid_id"],
  ])("%s is %s", async (_name, transcript, code) => {
    expect(errorOf(await h.call("ensembl_lookup_transcript", { transcript }))).toMatchObject({ code });
  });

  test("a 500 is upstream_unavailable", async () => {
    h.provider.setFault({ path: LOOKUP }, { status: 500 });
    expect(
      errorOf(await h.call("ensembl_lookup_transcript", { transcript: "ENST00000646891" })),
    ).toMatchObject({
      code: "upstream_unavailable",
      status: 500,
    });
  });
});

describe("ensembl_overlap_region", () => {
  test("lists the genes of a region with paging, and sends the region and feature type", async () => {
    const first = okResult(
      await h.call("ensembl_overlap_region", { region: "chr7:140,700,000-140,950,000", max_results: 1 }),
    );
    expect(h.provider.requests[0]?.path).toBe(
      "/ensembl/rest/overlap/region/homo_sapiens/7:140700000-140950000",
    );
    expect(h.provider.requests[0]?.query).toEqual({ feature: "gene" });
    expect(first.data).toMatchObject({
      region: "7:140700000-140950000",
      feature: "gene",
      total: 2,
      start: 0,
      returned: 1,
      hasMore: true,
      nextStart: 1,
    });
    expect(first.records[0]).toMatchObject({
      identifier: BRAF,
      identifierType: "ensembl_gene",
      title: "BRAF: protein_coding",
      url: BRAF_URL,
      contentScope: "structured-record",
      structuredData: { featureType: "gene", name: "BRAF", canonicalTranscript: "ENST00000646891.2" },
    });
    const second = okResult(
      await h.call("ensembl_overlap_region", { region: "7:140700000-140950000", max_results: 1, start: 1 }),
    );
    expect(second.records.map((r) => r.identifier)).toEqual(["ENSG00000289455"]);
    expect(second.data).toMatchObject({ total: 2, start: 1, returned: 1, hasMore: false });
    expect(second.data).not.toHaveProperty("nextStart");
  });

  test.each([
    ["gene", "ENSG00000157764", "/Gene/Summary?g="],
    ["transcript", "ENST00000646891", "/Transcript/Summary?t="],
    ["variation", "rs113488022", "/Variation/Explore?v="],
    ["regulatory", "ENSR7_5C3JZ", "/Regulation/Summary?rf="],
  ])("%s features get their Ensembl page on a manifest host", async (feature, id, page) => {
    const result = okResult(
      await h.call("ensembl_overlap_region", { region: "7:140753000-140925000", feature, species: "human" }),
    );
    expect(result.records.map((r) => r.identifier)).toContain(id);
    expect(result.records.find((r) => r.identifier === id)?.url).toContain(`/Homo_sapiens${page}${id}`);
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test("variants carry consequence, alleles and clinical significance", async () => {
    const result = okResult(
      await h.call("ensembl_overlap_region", { region: "7:140753300-140753400", feature: "variation" }),
    );
    expect(result.records[0]).toMatchObject({
      identifier: "rs113488022",
      identifierType: "variant",
      title: "rs113488022: missense_variant",
      structuredData: {
        consequence: "missense_variant",
        alleles: ["A", "C", "G", "T"],
        clinicalSignificance: ["pathogenic", "likely pathogenic"],
      },
    });
    expect(result.records[1]?.structuredData).not.toHaveProperty("clinicalSignificance");
  });

  test("a region without features is an empty success", async () => {
    const result = okResult(await h.call("ensembl_overlap_region", { region: "7:1000-2000" }));
    expect(result.records).toEqual([]);
    expect(result.data).toMatchObject({ total: 0, returned: 0, hasMore: false });
  });

  test("the biotype filter is sent to Ensembl", async () => {
    const result = okResult(
      await h.call("ensembl_overlap_region", { region: "7:140700000-140950000", biotype: "lncRNA" }),
    );
    expect(h.provider.requests[0]?.query).toEqual({ feature: "gene", biotype: "lncRNA" });
    expect(result.records.map((r) => r.identifier)).toEqual(["ENSG00000289455"]);
  });

  test.each([
    ["larger than 5 Mb", "7:100000000-105000001", /at most 5 Mb/],
    ["malformed", "chromosome seven", /must look like/],
    ["reversed", "7:2000-1000", /must look like/],
  ])("a region %s is invalid_input before any request", async (_name, region, message) => {
    const error = errorOf(await h.call("ensembl_overlap_region", { region }));
    expect(error).toMatchObject({ code: "invalid_input", message: expect.stringMatching(message) });
    expect(error.message).not.toContain(region);
    expect(h.provider.requests).toHaveLength(0);
  });

  test("exactly 5 Mb is served", async () => {
    okResult(await h.call("ensembl_overlap_region", { region: "7:100000001-105000000" }));
    expect(h.provider.requests).toHaveLength(1);
  });

  test("an unknown sequence region is not_found", async () => {
    expect(errorOf(await h.call("ensembl_overlap_region", { region: "KI999999.1:1-100" }))).toMatchObject({
      code: "not_found",
      status: 400,
    });
  });

  test("a 502 is upstream_unavailable", async () => {
    h.provider.setFault({ path: /overlap/ }, { status: 502 });
    expect(errorOf(await h.call("ensembl_overlap_region", { region: "7:1000-2000" }))).toMatchObject({
      code: "upstream_unavailable",
      status: 502,
    });
  });
});

describe("ensembl_variant_consequence", () => {
  test("HGVS gives the most severe consequence, transcript predictions and co-located variants", async () => {
    const result = okResult(await h.call("ensembl_variant_consequence", { variant: "7:g.140753336A>T" }));
    const [request] = h.provider.requests;
    expect(request?.path).toBe("/ensembl/rest/vep/homo_sapiens/hgvs/7:g.140753336A%3ET");
    expect(request?.query).toEqual({ hgvs: "1", canonical: "1", mane: "1" });
    expect(result.data).toEqual({
      variant: "7:g.140753336A>T",
      form: "hgvs",
      species: "homo_sapiens",
      assembly: "GRCh38",
      returned: 1,
    });
    const [record] = result.records;
    expect(record).toMatchObject({
      identifier: "7:g.140753336A>T",
      identifierType: "hgvs",
      title: "7:g.140753336A>T: missense_variant in BRAF",
      url: "https://www.ensembl.org/Homo_sapiens/Variation/Explore?v=rs113488022",
      contentScope: "analysis-result",
      primaryCitation: { label: expect.stringMatching(/^\[Ensembl VEP:7:g\.140753336A>T\]\(https:/) },
      structuredData: {
        mostSevereConsequence: "missense_variant",
        alleleString: "A/T",
        transcriptConsequenceCount: 2,
        regulatoryFeatureConsequenceCount: 1,
        location: { seqRegion: "7", start: 140753336, end: 140753336 },
      },
    });
    expect(record?.structuredData?.transcriptConsequences).toContainEqual({
      transcriptId: "ENST00000646891",
      geneId: BRAF,
      geneSymbol: "BRAF",
      consequenceTerms: ["missense_variant"],
      canonical: true,
      impact: "MODERATE",
      biotype: "protein_coding",
      hgvsc: "ENST00000646891.2:c.1799T>A",
      hgvsp: "ENSP00000493543.1:p.Val600Glu",
      aminoAcids: "V/E",
      codons: "gTg/gAg",
      proteinStart: 600,
      proteinEnd: 600,
      maneSelect: "NM_004333.6",
      sift: "deleterious",
      siftScore: 0,
      polyphen: "probably_damaging",
      polyphenScore: 0.967,
    });
    expect(record?.crossReferences.map((x) => [x.identifierType, x.identifier])).toEqual([
      ["variant", "rs113488022"],
      ["cosmic", "COSV56056643"],
      ["ensembl_gene", BRAF],
      ["pmid", "12068308"],
      ["pmid", "19001320"],
      ["pmid", "20818844"],
    ]);
    expectUrlsOnManifestHosts(result, "ensembl");
  });

  test("canonical_only keeps the canonical transcript's prediction", async () => {
    const result = okResult(
      await h.call("ensembl_variant_consequence", {
        variant: "ENST00000646891.2:c.1799T>A",
        canonical_only: true,
      }),
    );
    const consequences = result.records[0]?.structuredData?.transcriptConsequences as {
      transcriptId: string;
    }[];
    expect(consequences.map((c) => c.transcriptId)).toEqual(["ENST00000646891"]);
    expect(result.records[0]?.structuredData?.transcriptConsequenceCount).toBe(2);
  });

  test.each([
    ["an rs id", "rs113488022", "/vep/homo_sapiens/id/rs113488022", "variant"],
    [
      "region/allele",
      "chr7:140753336-140753336/t",
      "/vep/homo_sapiens/region/7:140753336-140753336:1/T",
      "region_allele",
    ],
  ])(
    "%s goes to its VEP endpoint and keeps the notation as identifier",
    async (_name, variant, path, type) => {
      const result = okResult(await h.call("ensembl_variant_consequence", { variant }));
      expect(h.provider.requests[0]?.path).toBe(`/ensembl/rest${path}`);
      expect(result.records[0]).toMatchObject({ identifierType: type, contentScope: "analysis-result" });
      expect(result.records[0]?.identifier).not.toContain(" ");
      expectUrlsOnManifestHosts(result, "ensembl");
    },
  );

  test.each([
    ["an unknown rs id", "rs999999999", "not_found"],
    ["an unknown transcript", "ENST00000999999.1:c.1A>T", "not_found"],
    ["a reference mismatch", "7:g.140753336G>T", "invalid_input"],
  ])("%s is %s (Ensembl's HTTP 400)", async (_name, variant, code) => {
    const error = errorOf(await h.call("ensembl_variant_consequence", { variant }));
    expect(error).toMatchObject({ code, status: 400 });
    expect(error.message).not.toContain(variant);
  });

  test.each([["BRAF V600E"], ["7:140753336"], ["rsABC"]])(
    "%s is invalid_id without a provider request",
    async (variant) => {
      expect(errorOf(await h.call("ensembl_variant_consequence", { variant }))).toMatchObject({
        code: "invalid_id",
      });
      expect(h.provider.requests).toHaveLength(0);
    },
  );

  test("429 then success", async () => {
    h.provider.setFault({ path: /\/vep\// }, { status: 429, retryAfter: "1" });
    expect(errorOf(await h.call("ensembl_variant_consequence", { variant: "rs113488022" }))).toMatchObject({
      code: "rate_limited",
      retryAfterMs: 1000,
    });
    expect(
      okResult(await h.call("ensembl_variant_consequence", { variant: "rs113488022" })).records,
    ).toHaveLength(1);
  });
});
