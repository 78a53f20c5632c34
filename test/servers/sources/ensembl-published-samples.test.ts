/**
 * The VEP parser over a real Ensembl REST VEP answer that a public repository committed as a test fixture
 * (see test/fixtures/providers/ensembl/real/SOURCES.md for its origin). The sample is GRCh37 and was requested
 * without `canonical`/`hgvs`, so it carries neither flag: what is checked is how the parser reads what is there.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { McpRecord } from "../../../src/contract/result-types.js";
import { parseVepAnswer } from "../../../src/servers/sources/ensembl/ensembl-vep-parser.js";
import { readManifest, resultUrls } from "./sources-harness.js";

const REAL = path.resolve(import.meta.dirname, "../../fixtures/providers/ensembl/real");
const VEP_FILE = "vep_grch37_hgvs_AGT_c803TC_and_9_g22125503GC.json";

function records(options: { canonicalOnly?: boolean } = {}): McpRecord[] {
  const text = readFileSync(path.join(REAL, VEP_FILE), "utf8");
  return parseVepAnswer({ text, host: "sample", status: 200 }, { species: "homo_sapiens", ...options });
}

type Consequence = { transcriptId: string; consequenceTerms: string[]; geneSymbol?: string; impact?: string };

function consequences(record: McpRecord | undefined): Consequence[] {
  return (record?.structuredData?.transcriptConsequences ?? []) as Consequence[];
}

describe("published Ensembl VEP answer (WebFuzzing/EvoMaster fixture, two HGVS inputs)", () => {
  test("one analysis-result record per input, named by the input notation", () => {
    const parsed = records();
    expect(parsed.map((r) => [r.identifier, r.identifierType, r.contentScope])).toEqual([
      ["AGT:c.803T>C", "hgvs", "analysis-result"],
      ["9:g.22125503G>C", "hgvs", "analysis-result"],
    ]);
  });

  test("AGT:c.803T>C: most severe consequence, per-transcript terms, impact and predictions", () => {
    const [agt] = records();
    expect(agt?.title).toBe("AGT:c.803T>C: missense_variant in AGT, RP11-99J16__A.2");
    expect(agt?.structuredData).toMatchObject({
      mostSevereConsequence: "missense_variant",
      alleleString: "T/C",
      transcriptConsequenceCount: 2,
      location: { seqRegion: "1", start: 230845794, end: 230845794, strand: -1 },
    });
    expect(consequences(agt)).toEqual([
      expect.objectContaining({
        transcriptId: "ENST00000366667",
        consequenceTerms: ["missense_variant"],
        geneSymbol: "AGT",
        impact: "MODERATE",
        aminoAcids: "M/T",
        codons: "aTg/aCg",
        proteinStart: 268,
        sift: "tolerated",
        siftScore: 1,
        polyphen: "benign",
        polyphenScore: 0,
      }),
      expect.objectContaining({
        transcriptId: "ENST00000412344",
        consequenceTerms: ["downstream_gene_variant"],
        impact: "MODIFIER",
      }),
    ]);
  });

  test("AGT:c.803T>C: co-located rs699 names the record; COSMIC and PubMed links are kept, HGMD is not linked", () => {
    const [agt] = records();
    // A GRCh37 answer opens the GRCh37 site, where its coordinates are the ones shown.
    expect(agt?.url).toBe("https://grch37.ensembl.org/Homo_sapiens/Variation/Explore?v=rs699");
    const colocated = agt?.structuredData?.colocatedVariants as Record<string, unknown>[];
    expect(colocated.map((v) => v.id)).toEqual(["CM920010", "COSV64184214", "rs699"]);
    expect(colocated[1]).toMatchObject({ somatic: true });
    expect(colocated[2]).toMatchObject({ clinicalSignificance: ["benign", "risk_factor"] });
    const refs = agt?.crossReferences ?? [];
    expect(refs.filter((r) => r.identifierType === "cosmic").map((r) => r.identifier)).toEqual([
      "COSV64184214",
    ]);
    expect(refs.some((r) => r.identifier === "CM920010")).toBe(false);
    // 115 PubMed ids on rs699: capped at 20, in the provider's order.
    const pmids = refs.filter((r) => r.identifierType === "pmid");
    expect(pmids).toHaveLength(20);
    expect(pmids[0]?.identifier).toBe("25741868");
  });

  test("9:g.22125503G>C: intergenic-ish answer with ten downstream transcripts and a regulatory feature", () => {
    const [, chr9] = records();
    expect(chr9?.title).toBe("9:g.22125503G>C: downstream_gene_variant in CDKN2B-AS1");
    expect(chr9?.structuredData).toMatchObject({
      mostSevereConsequence: "downstream_gene_variant",
      transcriptConsequenceCount: 10,
      regulatoryFeatureConsequenceCount: 1,
    });
    const terms = consequences(chr9).map((c) => c.consequenceTerms);
    expect(terms).toHaveLength(10);
    expect(new Set(terms.flat())).toEqual(new Set(["downstream_gene_variant"]));
    expect(chr9?.url).toBe("https://grch37.ensembl.org/Homo_sapiens/Variation/Explore?v=rs1333049");
  });

  test("canonical_only on an answer without canonical flags keeps no transcript (the tool then warns)", () => {
    for (const record of records({ canonicalOnly: true })) {
      expect(consequences(record)).toEqual([]);
      expect(record.structuredData?.transcriptConsequenceCount).toBeGreaterThan(0);
    }
  });

  test("every URL is on a host the ensembl manifest declares", () => {
    const hosts = readManifest("ensembl").governance.networkHosts;
    for (const url of resultUrls({ records: records() })) expect(hosts).toContain(new URL(url).hostname);
  });
});
