/**
 * What a ClinVar record keeps of the science: each classification with its own evidence, and where the variant
 * is. Over NCBI's official sample VCV and RCV documents in ../shared/fixtures/providers/clinvar (schema samples
 * whose data NCBI marks as fake; skipped, visibly, when that folder is absent) and, for a conflicting germline
 * classification, the project's invented VCV fixture edited as ClinVar writes a conflict (see the test).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { parseClinvarRcv } from "../../../src/servers/sources/clinvar/clinvar-rcv-parser.js";
import { parseClinvarVcv } from "../../../src/servers/sources/clinvar/clinvar-vcv-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "clinvar");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;
const FIXTURES = fileURLToPath(new URL("../../fixtures/providers/clinvar/", import.meta.url));

function sample(file: string): ProviderAnswer {
  const text = readFileSync(path.join(SAMPLES, file), "utf8");
  return { text: `<ClinVarResult-Set>\n${text}\n</ClinVarResult-Set>`, host: "sample", status: 200 };
}

/** Each tier of the official sample, as its own SCV states it. */
const TIER_II = {
  description: "Tier II - Potential",
  assertionType: "diagnostic",
  clinicalSignificance: "supports diagnosis",
  submissionCount: 1,
  lastEvaluated: "2021-08-30",
  reviewStatus: "reviewed by expert panel",
  stars: 3,
  submissions: ["SCV002318661"],
};
const TIER_I = {
  description: "Tier I - Strong",
  assertionType: "prognostic",
  clinicalSignificance: "poor outcome",
  submissionCount: 1,
  lastEvaluated: "2013-09-16",
  reviewStatus: "criteria provided, single submitter",
  stars: 1,
  submissions: ["SCV000505087"],
};

/** Where NM_005157.6(ABL1):c.944C>T is, as ClinVar shows it (1-based), and its SPDI (0-based). */
const ABL1_T315I_PLACE = {
  genes: ["ABL1"],
  rsIds: ["rs121913459"],
  cytogeneticBands: ["9q34.12"],
  canonicalSpdi0based: "NC_000009.12:130872895:C:T",
  locations: [
    {
      assembly: "GRCh38",
      chromosome: "9",
      sequenceAccession: "NC_000009.12",
      start1based: 130872896,
      stop1based: 130872896,
      vcf: { position1based: 130872896, ref: "C", alt: "T" },
    },
    {
      assembly: "GRCh37",
      chromosome: "9",
      sequenceAccession: "NC_000009.11",
      start1based: 133748283,
      stop1based: 133748283,
      vcf: { position1based: 133748283, ref: "C", alt: "T" },
    },
  ],
  hgvs: expect.objectContaining({
    maneSelect: "NM_005157.6:c.944C>T",
    genomic: { GRCh38: "NC_000009.12:g.130872896C>T", GRCh37: "NC_000009.11:g.133748283C>T" },
    protein: expect.arrayContaining(["NP_005148.2:p.Thr315Ile", "NP_009297.2:p.Thr334Ile"]),
  }),
  proteinChanges: ["T315I", "T334I"],
  molecularConsequences: [
    { consequence: "missense variant", soId: "SO:0001583", hgvs: "NM_005157.6:c.944C>T" },
    { consequence: "missense variant", soId: "SO:0001583", hgvs: "NM_007313.3:c.1001C>T" },
  ],
};

describe.skipIf(!hasSamples)(`ClinVar fidelity on NCBI's official samples${suffix}`, () => {
  test("RCV000432136: each somatic tier keeps its own review status, stars, date and assertion type", () => {
    const rcv = parseClinvarRcv(sample("rcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    const [somatic] = rcv.classifications;
    // The single-submitter prognostic Tier I is not credited to the expert panel.
    expect(somatic?.descriptions).toEqual([TIER_II, TIER_I]);
    expect(rcv.record.structuredData?.classifications).toEqual(rcv.classifications);
  });

  test("RCV000432136: the record says where the variant is, its gene and rsID, in labelled coordinates", () => {
    const rcv = parseClinvarRcv(sample("rcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    expect(rcv.record.structuredData).toMatchObject(ABL1_T315I_PLACE);
    expect(rcv.record.crossReferences.map((x) => [x.identifierType, x.identifier])).toEqual(
      expect.arrayContaining([
        ["ncbi_gene", "25"],
        ["dbsnp", "rs121913459"],
      ]),
    );
  });

  test("RCV000432136: conditions submitted only as MeSH/OMIM codes keep the codes and the named condition", () => {
    const rcv = parseClinvarRcv(sample("rcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    expect(rcv.submissions.map((s) => [s.accession, s.conditionCodes, s.conditions])).toEqual([
      ["SCV000505087", ["MeSH:D015464"], ["Chronic myelogenous leukemia, BCR-ABL1 positive"]],
      ["SCV002318661", ["OMIM:608232"], ["Chronic myelogenous leukemia, BCR-ABL1 positive"]],
    ]);
  });

  test("VCV000012624: the per-RCV breakdown is kept, and the variant's place, HGVS and MANE protein", () => {
    const vcv = parseClinvarVcv(sample("vcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    expect(vcv.rcvClassifications).toEqual([
      {
        accession: "RCV000432136",
        version: "2",
        conditions: ["Chronic myelogenous leukemia, BCR-ABL1 positive"],
        conditionIds: ["C0023473"],
        // ClinVar counts both SCVs under this RCV; the record places both there.
        submissionCount: 2,
        submissions: ["SCV000505087", "SCV002318661"],
        classifications: [expect.objectContaining({ descriptions: [TIER_II, TIER_I] })],
      },
    ]);
    expect(vcv.record.structuredData).toMatchObject({
      ...ABL1_T315I_PLACE,
      hgvs: expect.objectContaining({ maneSelectProtein: "NP_005148.2:p.Thr315Ile" }),
      rcvClassifications: vcv.rcvClassifications,
    });
    expect(vcv.submissions.map((s) => s.conditionCodes)).toEqual([["MeSH:D015464"], ["OMIM:608232"]]);
  });
});

describe("ClinVar conflicting classifications", () => {
  test("a conflicting germline classification keeps ClinVar's per-classification breakdown", () => {
    // Realistically edited: the project's invented VCV000900001 with its germline aggregate turned into a
    // conflict, written as ClinVar's VCV XML writes one (Description plus Explanation DataSource="ClinVar").
    const original = readFileSync(path.join(FIXTURES, "vcv-VCV000900001.xml"), "utf8");
    const edited = original.replace(
      /<ReviewStatus>criteria provided, multiple submitters, no conflicts<\/ReviewStatus>\s*<Description>Pathogenic<\/Description>/,
      '<ReviewStatus>criteria provided, conflicting classifications</ReviewStatus>\n<Description>Conflicting classifications of pathogenicity</Description>\n<Explanation DataSource="ClinVar" Type="public">Pathogenic(1); Uncertain significance(1)</Explanation>',
    );
    expect(edited).not.toBe(original);
    const vcv = parseClinvarVcv({ text: edited, host: "fixture", status: 200 });
    expect(vcv.classifications[0]).toMatchObject({
      type: "germline",
      classification: "Conflicting classifications of pathogenicity",
      reviewStatus: "criteria provided, conflicting classifications",
      stars: 1,
      explanation: "Pathogenic(1); Uncertain significance(1)",
      breakdown: [
        { classification: "Pathogenic", submissionCount: 1 },
        { classification: "Uncertain significance", submissionCount: 1 },
      ],
    });
  });
});
