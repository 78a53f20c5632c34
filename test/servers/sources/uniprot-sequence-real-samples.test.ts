/**
 * What a UniProtKB length is the length of, and the entry version a citation opens, over real 2024 entries of
 * the second fidelity review (../shared/fixtures/fidelity3/uniprot, origins in its SOURCES.md; skipped,
 * visibly, when absent): O14975 (two isoforms), O00115 (a precursor with a signal peptide), P0DKX7 (a
 * precursor cleaved into two chains). One test runs O00115 through the MCP tool.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { parseUniprotResults } from "../../../src/servers/sources/uniprot/uniprot-entry-parser.js";
import { providerPath } from "../../../src/testing/fake-provider-server.js";
import {
  expectUrlsOnManifestHosts,
  okResult,
  SHARED_FIDELITY_SAMPLES,
  type SourcesHarness,
  sharedSamples,
  startSourcesHarness,
} from "./sources-harness.js";

const SAMPLES = path.join(SHARED_FIDELITY_SAMPLES, "uniprot");
const { has, suffix } = sharedSamples(SAMPLES);
const read = (file: string) => readFileSync(path.join(SAMPLES, file), "utf8");
/** The single-entry files hold one entry object; the accessions endpoint wraps entries in `results`. */
const asResults = (file: string) => JSON.stringify({ results: [JSON.parse(read(file))] });

function entry(text: string, accession: string) {
  const found = parseUniprotResults({ text, host: "sample", status: 200 }).entries.find(
    (e) => e.accession === accession,
  );
  expect(found).toBeDefined();
  return (found as NonNullable<typeof found>).record;
}

describe.skipIf(!has)(`UniProt sequence facts over real entries${suffix}`, () => {
  test("O14975: the length 620 is of isoform O14975-1, and the other isoform is named", () => {
    const record = entry(read("enzsrp_uniprotkb_accession_F1MAB7_OR_O14975_2024_09_21.json"), "O14975");
    expect(record.structuredData).toMatchObject({
      sequenceLength: 620,
      sequenceIsoform: "O14975-1",
      isoforms: [
        { id: "O14975-1", name: "1", synonyms: ["FATP2a"], status: "Displayed" },
        { id: "O14975-2", name: "2", synonyms: ["FATP2b"], status: "Described" },
      ],
    });
    expect(record.warnings).toContain(
      "O14975: The sequence (620 aa) is isoform O14975-1, UniProt's canonical one; UniProt describes 1 other " +
        "isoform(s) (O14975-2) with other sequences. Say which isoform a length or position refers to.",
    );
  });

  test("O00115: the length 360 is of the precursor, signal peptide 1-18 included; the mature chain is 19-360", () => {
    const record = entry(asResults("enzsrp_O00115.json"), "O00115");
    expect(record.structuredData).toMatchObject({
      sequenceLength: 360,
      precursor: true,
      signalPeptide: { start: 1, end: 18 },
      matureChains: [
        { start: 19, end: 360, length: 342, type: "chain", description: "Deoxyribonuclease-2-alpha" },
      ],
    });
    expect(record.warnings).toContain(
      "O00115: The sequence length 360 is that of the precursor: it includes the signal peptide 1-18; the " +
        "mature chain 19-360 (342 aa).",
    );
  });

  test("P0DKX7: a precursor cleaved into two chains names both", () => {
    const record = entry(asResults("enzsrp_P0DKX7.json"), "P0DKX7");
    expect(record.structuredData?.matureChains).toEqual([
      {
        start: 1,
        end: 312,
        length: 312,
        type: "chain",
        description: "Calmodulin-sensitive adenylate cyclase",
      },
      { start: 313, end: 1706, length: 1394, type: "chain", description: "Hemolysin" },
    ]);
    expect(record.warnings).toContainEqual(expect.stringContaining("is that of the precursor"));
  });

  test("the citation opens the entry version read (UniSave), the record's url the current entry", () => {
    const record = entry(read("enzsrp_uniprotkb_accession_F1MAB7_OR_O14975_2024_09_21.json"), "O14975");
    expect(record.url).toBe("https://www.uniprot.org/uniprotkb/O14975/entry");
    expect(record.primaryCitation).toEqual({
      label:
        "[UniProtKB:O14975 (entry version 191)](https://rest.uniprot.org/unisave/O14975?format=txt&versions=191)",
      url: "https://rest.uniprot.org/unisave/O14975?format=txt&versions=191",
      identifier: "O14975",
      identifierType: "uniprot",
      version: "191",
    });
  });

  test("every entry of the three real search answers parses, none malformed", () => {
    for (const file of [
      "enzsrp_uniprotkb_A0A0E3KBH3_OR_A0A072ULZ1_OR_A_2024_09_24.json",
      "enzsrp_uniprotkb_accession_A1L3X0_OR_accession_2024_07_27.json",
      "enzsrp_uniprotkb_accession_F1MAB7_OR_O14975_2024_09_21.json",
    ]) {
      const parsed = parseUniprotResults({ text: read(file), host: "sample", status: 200 });
      expect(parsed.malformed, file).toBe(0);
      expect(parsed.entries.length, file).toBeGreaterThan(0);
    }
  });
});

let h: SourcesHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.skipIf(!has)(`uniprot_lookup over a real entry${suffix}`, () => {
  test("O00115 through the tool: precursor warning, the release the answer names, the versioned citation", async () => {
    h = await startSourcesHarness(
      [
        {
          path: providerPath("uniprot", "rest", "/uniprotkb/accessions"),
          body: asResults("enzsrp_O00115.json"),
          // Hand-made headers: UniProt names its release in these on every answer (the sample kept no headers).
          headers: {
            "content-type": "application/json",
            "x-uniprot-release": "2024_04",
            "x-uniprot-release-date": "24-July-2024",
          },
        },
      ],
      { only: ["uniprot"] },
    );
    const result = okResult(await h.call("uniprot_lookup", { accessions: ["O00115"] }));
    const fields = String(h.provider.requests[0]?.query.fields).split(",");
    expect(fields).toEqual(expect.arrayContaining(["cc_alternative_products", "ft_signal", "ft_chain"]));
    const [record] = result.records;
    expect(record?.structuredData).toMatchObject({
      precursor: true,
      uniprotRelease: "2024_04",
      uniprotReleaseDate: "24-July-2024",
      entryVersion: 196,
    });
    expect(record?.warnings).toContainEqual(expect.stringContaining("signal peptide 1-18"));
    expect(record?.primaryCitation.url).toBe(
      "https://rest.uniprot.org/unisave/O00115?format=txt&versions=196",
    );
    expectUrlsOnManifestHosts(result, "uniprot");
  });
});
