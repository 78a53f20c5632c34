/**
 * The ClinVar parsers over NCBI's official sample VCV and RCV documents in ../shared/fixtures/providers/clinvar
 * (see README.txt there: schema samples whose data NCBI marks as fake). Skipped, visibly, when that folder is
 * not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parseClinvarRcv } from "../../../src/servers/sources/clinvar/clinvar-rcv-parser.js";
import { parseClinvarVcv } from "../../../src/servers/sources/clinvar/clinvar-vcv-parser.js";
import { isProviderError } from "../../../src/servers/sources/provider-error.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "clinvar");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;
const CONDITION = "Chronic myelogenous leukemia, BCR-ABL1 positive";

function text(file: string): string {
  return readFileSync(path.join(SAMPLES, file), "utf8");
}

/** A live EFetch wraps each document in ClinVarResult-Set; the samples start at the document itself. */
function asEfetch(file: string): ProviderAnswer {
  return { text: `<ClinVarResult-Set>\n${text(file)}\n</ClinVarResult-Set>`, host: "sample", status: 200 };
}

function expectOnManifestHosts(urls: string[]): void {
  const hosts = readManifest("clinvar").governance.networkHosts;
  expect(urls.length).toBeGreaterThan(0);
  for (const url of urls) {
    expect(new URL(url).protocol, url).toBe("https:");
    expect(hosts, url).toContain(new URL(url).hostname);
  }
}

describe.skipIf(!hasSamples)(`real ClinVar samples${suffix}`, () => {
  test("VCV000012624: somatic clinical impact with expert-panel stars, two submissions", () => {
    const vcv = parseClinvarVcv(asEfetch("vcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    expect(vcv).toMatchObject({ variationId: "12624", accession: "VCV000012624", version: "2" });
    expect(vcv.classifications).toEqual([
      {
        type: "somatic_clinical_impact",
        classification: "Tier II - Potential",
        reviewStatus: "reviewed by expert panel",
        stars: 3,
        lastEvaluated: "2021-08-30",
        submissionCount: 2,
        submitterCount: 2,
        descriptions: [
          {
            description: "Tier II - Potential",
            reviewStatus: "reviewed by expert panel",
            stars: 3,
            submissions: ["SCV002318661"],
          },
        ],
        conditions: [CONDITION],
      },
    ]);
    expect(vcv.submissions).toEqual([
      {
        accession: "SCV000505087",
        version: "1",
        submitter: "Database of Curated Mutations (DoCM)",
        type: "somatic_clinical_impact",
        classification: "Tier I - Strong",
        assertionType: "prognostic",
        significance: "poor outcome",
        reviewStatus: "criteria provided, single submitter",
        stars: 1,
        lastEvaluated: "2013-09-16",
        submitted: "2014-04-11",
        // The submission names its condition only by a MeSH xref; ClinVar's trait mapping names it.
        conditions: [CONDITION],
        conditionCodes: ["MeSH:D015464"],
        rcvAccession: "RCV000432136",
        origins: ["somatic"],
        methods: ["literature only"],
        pubmedIds: ["27993330"],
      },
      expect.objectContaining({
        accession: "SCV002318661",
        submitter: "ClinVar",
        stars: 3,
        assertionType: "diagnostic",
        methods: ["clinical testing"],
      }),
    ]);
    expect(vcv.record).toMatchObject({
      identifier: "VCV000012624",
      title: "NM_005157.6(ABL1):c.944C>T (p.Thr315Ile)",
      url: "https://www.ncbi.nlm.nih.gov/clinvar/variation/12624/",
      primaryCitation: { version: "VCV000012624.2" },
      structuredData: {
        genes: ["ABL1"],
        canonicalSpdi0based: "NC_000009.12:130872895:C:T",
        submissionCount: 2,
      },
    });
    expect(vcv.record.crossReferences.map((x) => [x.identifierType, x.identifier])).toEqual([
      ["ncbi_gene", "25"],
      ["dbsnp", "rs121913459"],
      ["clingen", "CA122575"],
      ["omim", "189980.0001"],
      ["clinvar_rcv", "RCV000432136"],
    ]);
    expectOnManifestHosts(resultUrls({ records: [vcv.record] }));
  });

  test("RCV000432136: both somatic tiers, the variation it belongs to, and its submitters", () => {
    const rcv = parseClinvarRcv(asEfetch("rcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"));
    expect(rcv).toMatchObject({ accession: "RCV000432136", version: "2", variationId: "12624" });
    expect(rcv.classifications).toEqual([
      {
        type: "somatic_clinical_impact",
        classification: "Tier II - Potential; Tier I - Strong",
        reviewStatus: "reviewed by expert panel",
        stars: 3,
        lastEvaluated: "2021-08-30",
        // Each tier with its own evidence: see clinvar-fidelity-real-samples.test.ts.
        descriptions: [expect.objectContaining({ stars: 3 }), expect.objectContaining({ stars: 1 })],
        conditions: [CONDITION],
      },
    ]);
    expect(rcv.submissions.map((s) => [s.accession, s.submitter, s.submitted, s.classification])).toEqual([
      ["SCV000505087", "Database of Curated Mutations (DoCM)", "2014-04-11", "Tier I - Strong"],
      ["SCV002318661", "ClinVar", "2022-05-04", "Tier II - Potential"],
    ]);
    expect(rcv.record).toMatchObject({
      title: `NM_005157.6(ABL1):c.944C>T (p.Thr315Ile) AND ${CONDITION}`,
      url: "https://www.ncbi.nlm.nih.gov/clinvar/RCV000432136/",
      crossReferences: [
        { identifier: "VCV000012624", url: "https://www.ncbi.nlm.nih.gov/clinvar/variation/12624/" },
        { identifier: "25", identifierType: "ncbi_gene" },
        { identifier: "rs121913459", identifierType: "dbsnp" },
        { identifier: "C0023473", identifierType: "medgen" },
      ],
    });
    expectOnManifestHosts(resultUrls({ records: [rcv.record] }));
  });

  test("a document without NCBI's ClinVarResult-Set wrapper is malformed, not an empty success", () => {
    const bare: ProviderAnswer = {
      text: text("vcv_01_OFFICIAL_SAMPLE_FAKE_DATA.xml"),
      host: "sample",
      status: 200,
    };
    let code: string | undefined;
    try {
      parseClinvarVcv(bare);
    } catch (error) {
      code = isProviderError(error) ? error.code : "not a ProviderError";
    }
    expect(code).toBe("upstream_unavailable");
  });
});
