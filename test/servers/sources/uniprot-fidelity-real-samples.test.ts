/**
 * What a UniProt record keeps of the science: each PDB structure's method, resolution and chains, and an honest
 * review status. Over the real UniProtKB answers in ../shared/fixtures/providers/uniprot (reduced by their
 * origin; skipped, visibly, when that folder is absent) and, for the review status, the real P15056 entry with
 * its entryType edited or removed (see the tests).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { parseUniprotResults } from "../../../src/servers/sources/uniprot/uniprot-entry-parser.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const folder = path.join(SHARED_PROVIDER_SAMPLES, "uniprot");
const hasSamples = existsSync(folder);
const suffix = hasSamples ? "" : ` (SKIPPED: ${folder} not found)`;
const read = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(folder, file), "utf8")) as Record<string, unknown>;
const list = (...entries: unknown[]): ProviderAnswer => ({
  text: JSON.stringify({ results: entries }),
  host: "sample",
  status: 200,
});

/** The six PDB structures of BRAF as the real samples describe them (Method, Resolution, Chains). */
const BRAF_STRUCTURES = [
  { id: "1UWH", method: "X-ray", resolutionAngstrom: 2.95, chains: "A/B=448-723" },
  { id: "1UWJ", method: "X-ray", resolutionAngstrom: 3.5, chains: "A/B=448-723" },
  { id: "2FB8", method: "X-ray", resolutionAngstrom: 2.9, chains: "A/B=445-723" },
  { id: "2L05", method: "NMR", chains: "A=149-232" },
  { id: "3C4C", method: "X-ray", resolutionAngstrom: 2.57, chains: "A/B=444-721" },
  { id: "3D4Q", method: "X-ray", resolutionAngstrom: 2.8, chains: "A/B=433-726" },
];

describe.skipIf(!hasSamples)(`UniProt fidelity over real samples${suffix}`, () => {
  test.each(["search_json_REDUCED.json", "entry_P15056_json_REDUCED.json"])(
    "%s: every PDB structure keeps its method, resolution (Å) and chains",
    (file) => {
      const body = read(file);
      const entry = Array.isArray(body.results) ? body.results[0] : body;
      const [parsed] = parseUniprotResults(list(entry)).entries;
      expect(parsed?.record.structuredData?.pdbStructures).toEqual(BRAF_STRUCTURES);
      expect(parsed?.record.structuredData).toMatchObject({
        reviewed: true,
        reviewStatus: "reviewed (Swiss-Prot)",
      });
      expect(parsed?.record.warnings).toEqual([]);
    },
  );

  test("an entry without entryType is not called TrEMBL: its review status is unknown", () => {
    // Edited: the real P15056 entry with its entryType field removed.
    const { entryType: _dropped, ...entry } = read("entry_P15056_json_REDUCED.json");
    const [parsed] = parseUniprotResults(list(entry)).entries;
    expect(parsed?.record.warnings).toEqual([
      "UniProt gave no entry type: whether this entry is reviewed (Swiss-Prot) or unreviewed (TrEMBL) is unknown.",
    ]);
    expect(parsed?.record.warnings.join(" ")).not.toMatch(/Unreviewed|computed, not curated/);
    expect(parsed?.record.structuredData).not.toHaveProperty("reviewed");
    expect(parsed?.record.structuredData?.reviewStatus).toBe("unknown");
  });

  test("a TrEMBL entry still gets the unreviewed warning", () => {
    // Edited: the real P15056 entry with the entryType UniProt gives unreviewed entries.
    const entry = { ...read("entry_P15056_json_REDUCED.json"), entryType: "UniProtKB unreviewed (TrEMBL)" };
    const [parsed] = parseUniprotResults(list(entry)).entries;
    expect(parsed?.record.warnings).toEqual([
      "Unreviewed UniProtKB/TrEMBL entry: its annotation is computed, not curated.",
    ]);
    expect(parsed?.record.structuredData).toMatchObject({
      reviewed: false,
      reviewStatus: "unreviewed (TrEMBL)",
    });
  });
});
