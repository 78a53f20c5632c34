/**
 * ClinVar over real records of the second fidelity review (../shared/fixtures/fidelity3/clinvar, each file's
 * origin in its SOURCES.md; skipped, visibly, when that folder is absent): submissions under the conditions
 * ClinVar counts them under, a superseded version, a condition named only as "included", haplotypes and
 * genotypes, germline aggregates' submission lists, and citations that open the version read. ClinVar's own
 * counts (`SubmissionCount` of each RCV) are the oracle: the tests never restate them by hand.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parseClinvarRcv } from "../../../src/servers/sources/clinvar/clinvar-rcv-parser.js";
import {
  type ClinvarVariationArchive,
  parseClinvarVcv,
} from "../../../src/servers/sources/clinvar/clinvar-vcv-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { type FakeResponse, providerPath } from "../../../src/testing/fake-provider-server.js";
import {
  expectUrlsOnManifestHosts,
  okResult,
  readManifest,
  resultUrls,
  SHARED_FIDELITY_SAMPLES,
  type SourcesHarness,
  sharedSamples,
  startSourcesHarness,
} from "./sources-harness.js";

const SAMPLES = path.join(SHARED_FIDELITY_SAMPLES, "clinvar");
const { has, suffix } = sharedSamples(SAMPLES);
const TSC2_V1 = "metapub_clinvar_vcv_12397_v1_previous.xml";
const BRAF = "clinvaringest_VCV000013961_as_efetch.xml";
const DNMT3A = "clinvaringest_VCV000375881_as_efetch.xml";
const CFTR = "clinvaringest_VCV000040200_as_efetch.xml";
const MARS1 = "clinvaringest_VCV000424711_as_efetch.xml";
const CYP2C19 = "clinvaringest_VCV000634266_as_efetch.xml";

const answer = (file: string): ProviderAnswer => ({
  text: readFileSync(path.join(SAMPLES, file), "utf8"),
  host: "sample",
  status: 200,
});
const vcv = (file: string) => parseClinvarVcv(answer(file));

/** Every RCV (and description) whose listed submissions are not as many as ClinVar counts there. */
function disagreements(archive: Pick<ClinvarVariationArchive, "rcvClassifications">): string[] {
  return archive.rcvClassifications.flatMap((rcv) => {
    const wrong: string[] = [];
    let total = 0;
    for (const classification of rcv.classifications) {
      for (const d of classification.descriptions) {
        const counted = d.submissionCount ?? 0;
        const listed = d.submissions?.length ?? 0;
        total += counted;
        if (counted !== listed) {
          wrong.push(`${rcv.accession} ${d.description}: ClinVar ${counted}, listed ${listed}`);
        }
      }
    }
    if (rcv.submissions.length !== total) {
      wrong.push(`${rcv.accession}: ClinVar ${total}, listed ${rcv.submissions.length}`);
    }
    return wrong;
  });
}

const rcvOf = (archive: ClinvarVariationArchive, accession: string) =>
  archive.rcvClassifications.find((rcv) => rcv.accession === accession);

describe.skipIf(!has)(`ClinVar conditions and versions over real records${suffix}`, () => {
  test.each([
    [TSC2_V1, 5],
    [DNMT3A, 13],
    [CFTR, 1],
    [MARS1, 1],
    [CYP2C19, 4],
  ])("%s: each of its %i conditions lists as many submissions as ClinVar counts there", (file, rcvs) => {
    const archive = vcv(file);
    expect(archive.rcvClassifications).toHaveLength(rcvs);
    expect(disagreements(archive)).toEqual([]);
    expect(archive.submissions.filter((s) => s.rcvAccession === undefined)).toEqual([]);
    expect(archive.record.warnings.join(" ")).not.toMatch(/does not tie/);
  });

  test("VCV000012397.1: each condition keeps its own submissions, matched by code or by name in any case", () => {
    const archive = vcv(TSC2_V1);
    const lists = Object.fromEntries(archive.rcvClassifications.map((r) => [r.accession, r.submissions]));
    expect(lists).toEqual({
      // OMIM's capitalised name and the codes-only submissions (MedGen CUI, OMIM phenotype) belong here; so does
      // SCV000090404, whose gene-level OMIM code is in no condition: the one place ClinVar's counts leave for it.
      RCV000013205: [
        "SCV000090404",
        "SCV000255877",
        "SCV000033452",
        "SCV000782399",
        "SCV000544351",
        "SCV000840073",
      ],
      RCV000042946: ["SCV000066743"],
      // The somatic LAM submission sits under lymphangiomyomatosis, not under every condition.
      RCV000055317: ["SCV000083537", "SCV000033453"],
      RCV000414340: ["SCV000491001", "SCV000615886"],
      RCV000491426: ["SCV000579587"],
    });
    expect(rcvOf(archive, "RCV000491426")?.classifications[0]?.descriptions[0]).toMatchObject({
      description: "Pathogenic",
      submissionCount: 1,
      submissions: ["SCV000579587"],
    });
    // A submission that gave only a code reads as ClinVar names the condition.
    expect(archive.submissions.find((s) => s.accession === "SCV000840073")?.conditions).toEqual([
      "Tuberous sclerosis 2",
    ]);
  });

  test("SCV000033453 names its condition only as an 'included' trait; the name is kept", () => {
    const submission = vcv(TSC2_V1).submissions.find((s) => s.accession === "SCV000033453");
    expect(submission).toMatchObject({
      conditions: ["LYMPHANGIOLEIOMYOMATOSIS, SOMATIC"],
      origins: ["somatic"],
      rcvAccession: "RCV000055317",
    });
  });

  test("VCV000012397.1 is a superseded version: a warning says so and the citation opens version 1", () => {
    const archive = vcv(TSC2_V1);
    expect(archive.recordStatus).toBe("previous");
    expect(archive.record.structuredData).toMatchObject({ version: "1", recordStatus: "previous" });
    expect(archive.record.warnings).toContainEqual(expect.stringMatching(/^SUPERSEDED: VCV000012397\.1 /));
    expect(archive.record.primaryCitation).toEqual({
      label: "[ClinVar:VCV000012397.1](https://www.ncbi.nlm.nih.gov/clinvar/VCV000012397.1/)",
      url: "https://www.ncbi.nlm.nih.gov/clinvar/VCV000012397.1/",
      identifier: "VCV000012397",
      identifierType: "clinvar_vcv",
      version: "VCV000012397.1",
    });
    // The record's own url stays the variation page, which shows the current version.
    expect(archive.record.url).toBe("https://www.ncbi.nlm.nih.gov/clinvar/variation/12397/");
    expect(vcv(DNMT3A).record.warnings).not.toContainEqual(expect.stringMatching(/SUPERSEDED/));
  });

  test.each([
    [BRAF, 37],
    [DNMT3A, 18],
  ])(
    "%s: the germline Pathogenic/Likely pathogenic aggregate lists all its %i submissions",
    (file, count) => {
      const [germline, somatic, oncogenicity] = vcv(file).classifications;
      expect(germline).toMatchObject({
        classification: "Pathogenic/Likely pathogenic",
        submissionCount: count,
      });
      expect(germline?.descriptions[0]?.submissions).toHaveLength(count);
      expect(somatic?.descriptions.every((d) => (d.submissions?.length ?? 0) > 0)).toBe(true);
      expect(oncogenicity?.descriptions[0]?.submissions).toHaveLength(1);
    },
  );

  test("BRAF V600E: conditions the record ties agree with ClinVar; the rest name their candidate SCVs", () => {
    const archive = vcv(BRAF);
    const open = archive.rcvClassifications.filter((rcv) => rcv.unresolved);
    expect(open.map((rcv) => rcv.accession)).toEqual([
      "RCV000014992",
      "RCV000014993",
      "RCV000067669",
      "RCV000080903",
      "RCV000429915",
      "RCV000424470",
    ]);
    for (const rcv of archive.rcvClassifications) {
      const count = rcv.submissionCount;
      expect(rcv.submissions.length + (rcv.unresolved?.missing ?? 0), rcv.accession).toBe(count);
    }
    // Nothing is listed under a condition it does not belong to: the only gaps are counted and named.
    expect(disagreements(archive).every((row) => open.some((rcv) => row.startsWith(rcv.accession)))).toBe(
      true,
    );
    expect(rcvOf(archive, "RCV000429915")?.unresolved).toEqual({
      missing: 1,
      candidates: ["SCV000504258", "SCV000504264"],
    });
    expect(archive.record.warnings).toContainEqual(
      expect.stringMatching(/RCV000014992 \(Carcinoma of colon\) lacks 1: one of SCV000035248, SCV000035247/),
    );
  });

  test.each([
    [CFTR, "haplotype", ["CFTR"], 2, { start1based: 117540305, stop1based: 117540309 }],
    [MARS1, "compound heterozygote", ["MARS1"], 3, { start1based: 57498563, stop1based: 57512300 }],
    [CYP2C19, "diplotype", ["CYP2C19", "LOC110599570"], 4, { start1based: 94762693, stop1based: 94852914 }],
  ])("%s: a %s states its genes, its span and each variant's place", (file, kind, genes, parts, span) => {
    const archive = vcv(file);
    const data = archive.record.structuredData ?? {};
    expect(data.genes).toEqual(genes);
    expect(data.locations).toContainEqual({
      assembly: "GRCh38",
      chromosome: expect.any(String),
      sequenceAccession: expect.stringMatching(/^NC_/),
      ...span,
    });
    const components = data.components as { locations: unknown[]; canonicalSpdi0based?: string }[];
    expect(components).toHaveLength(parts);
    for (const part of components) {
      expect(part.locations).toContainEqual(expect.objectContaining({ assembly: "GRCh38" }));
      expect(part.canonicalSpdi0based).toMatch(/^NC_/);
    }
    expect(archive.record.warnings).toContainEqual(
      expect.stringContaining(`is a ${kind} of ${parts} variants`),
    );
    expect(archive.record.crossReferences).toContainEqual(
      expect.objectContaining({ identifierType: "ncbi_gene" }),
    );
  });

  test("MARS1: the variants of the genotype's haplotype say which haplotype they belong to", () => {
    const components = vcv(MARS1).record.structuredData?.components as { name: string; haplotype?: string }[];
    expect(components.map((c) => [c.name, c.haplotype])).toEqual([
      ["NM_004990.4(MARS1):c.1031A>G (p.Tyr344Cys)", undefined],
      ["NM_004990.4(MARS1):c.1700C>T (p.Ser567Leu)", "NM_004990.3(MARS):c.[1700C>T;1177G>A]"],
      ["NM_004990.4(MARS1):c.1177G>A (p.Ala393Thr)", "NM_004990.3(MARS):c.[1700C>T;1177G>A]"],
    ]);
  });

  test.each([
    ["clinvaringest_RCV000000010_as_efetch.xml", "RCV000000010.3"],
    ["clinvaringest_RCV000000012_as_efetch.xml", "RCV000000012.5"],
  ])("%s: the RCV citation opens the version read", (file, versioned) => {
    const rcv = parseClinvarRcv(answer(file));
    expect(rcv.record.primaryCitation).toMatchObject({
      label: `[ClinVar:${versioned}](https://www.ncbi.nlm.nih.gov/clinvar/${versioned}/)`,
      version: versioned,
    });
    const hosts = readManifest("clinvar").governance.networkHosts;
    for (const url of resultUrls({ records: [rcv.record] })) expect(hosts).toContain(new URL(url).hostname);
  });
});

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * An EFetch `clinvarset` answer listing the SCVs of some RCVs. Hand-made: no real RCV record of BRAF V600E is
 * available, so the membership below is this test's assumption (read from the OMIM names and MeSH codes of
 * those submissions), not ClinVar's word; the test checks that the tool takes RCV records as authoritative.
 */
const BRAF_RCV_MEMBERS: Record<string, string[]> = {
  RCV000014992: ["SCV000035248"],
  RCV000014993: ["SCV000035249", "SCV000504263"],
  RCV000067669: ["SCV000504249", "SCV000035247", "SCV005045669", "SCV004565360"],
  RCV000080903: ["SCV000112810", "SCV001450230", "SCV001550994", "SCV001962698"],
  RCV000429915: ["SCV000504264"],
  RCV000424470: ["SCV000504258"],
};

function rcvSets(ids: string): FakeResponse {
  const sets = ids
    .split(",")
    .filter((id) => BRAF_RCV_MEMBERS[id])
    .map(
      (rcv) =>
        `<ClinVarSet ID="1"><RecordStatus>current</RecordStatus><ReferenceClinVarAssertion>` +
        `<ClinVarAccession Acc="${rcv}" Version="1" Type="RCV"/></ReferenceClinVarAssertion>` +
        (BRAF_RCV_MEMBERS[rcv] ?? [])
          .map((scv) => `<ClinVarAssertion><ClinVarAccession Acc="${scv}" Type="SCV"/></ClinVarAssertion>`)
          .join("") +
        "</ClinVarSet>",
    );
  return {
    body: `<ClinVarResult-Set>${sets.join("")}</ClinVarResult-Set>`,
    headers: { "content-type": "text/xml" },
  };
}

describe.skipIf(!has)(`clinvar_get_assertions over real records${suffix}`, () => {
  const efetch = providerPath("clinvar", "eutils", "/efetch.fcgi");

  test("BRAF V600E: the RCV records of the conditions the VCV leaves open place the rest (one more EFetch)", async () => {
    h = await startSourcesHarness(
      [
        { path: efetch, query: { rettype: "vcv", id: "VCV000013961" }, file: path.join(SAMPLES, BRAF) },
        { path: efetch, handler: (request) => rcvSets(request.query.get("id") ?? "") },
      ],
      { only: ["clinvar"] },
    );
    const result = okResult(
      await h.call("clinvar_get_assertions", { accession: "VCV000013961", max_results: 1 }),
    );
    expect(h.provider.requests.map((r) => [r.query.rettype, r.query.id])).toEqual([
      ["vcv", "VCV000013961"],
      ["clinvarset", Object.keys(BRAF_RCV_MEMBERS).join(",")],
    ]);
    const rcvs = result.data?.rcvClassifications as ClinvarVariationArchive["rcvClassifications"];
    expect(disagreements({ rcvClassifications: rcvs })).toEqual([]);
    expect(result.data?.placedFromRcvRecords).toEqual(Object.keys(BRAF_RCV_MEMBERS));
    expect(result.records[0]?.warnings.join(" ")).not.toMatch(/does not tie/);
    expect(result.records[0]?.primaryCitation.url).toBe(
      "https://www.ncbi.nlm.nih.gov/clinvar/VCV000013961.132/",
    );
    expectUrlsOnManifestHosts(result, "clinvar");
  });

  test("VCV000012397.1 through the tool: the superseded version's warning reaches the model", async () => {
    h = await startSourcesHarness([{ path: efetch, file: path.join(SAMPLES, TSC2_V1) }], {
      only: ["clinvar"],
    });
    const result = okResult(await h.call("clinvar_get_assertions", { accession: "VCV000012397" }));
    // Record warnings are shown to the model with the record (src/nodes/tool-message-text.ts).
    expect(result.records[0]?.warnings).toContainEqual(
      expect.stringMatching(/^SUPERSEDED: VCV000012397\.1 /),
    );
    // The VCV record placed every submission itself: no RCV records were fetched.
    expect(h.provider.requests).toHaveLength(1);
  });
});
