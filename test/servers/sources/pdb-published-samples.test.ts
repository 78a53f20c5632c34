/**
 * The PDB entry parser over real RCSB Data API entry objects published in a public repository
 * (test/fixtures/providers/pdb/real/, origin in SOURCES.md there): an RCSB custom-report export whose items carry
 * the Data API's own field names. Each object is read as a REST core-entry answer and, together, as a GraphQL
 * `entries` answer (edited only by wrapping them in `{"data": {"entries": [...]}}`).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  parsePdbCoreEntry,
  parsePdbGraphqlEntries,
} from "../../../src/servers/sources/pdb/pdb-entry-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls } from "./sources-harness.js";

const FILE = fileURLToPath(
  new URL("../../fixtures/providers/pdb/real/custom-report-1G6U-1HQJ-1JY4.json", import.meta.url),
);
const items = JSON.parse(readFileSync(FILE, "utf8")) as { identifier: string; data: unknown }[];
const answer = (body: unknown): ProviderAnswer => ({
  text: JSON.stringify(body),
  host: "sample",
  status: 200,
});
const entry = (id: string) => {
  const item = items.find((i) => i.identifier === id);
  if (!item) throw new Error(`${id} is not in the sample`);
  return parsePdbCoreEntry(answer(item.data));
};

describe("real RCSB Data API entry objects (published export)", () => {
  test("1G6U: X-ray at 1.48 Å with its primary citation's DOI, journal, year and title", () => {
    const { record, isPdbFormatAvailable } = entry("1G6U");
    expect(isPdbFormatAvailable).toBe(true);
    expect(record).toMatchObject({
      identifier: "1G6U",
      url: "https://www.rcsb.org/structure/1G6U",
      contentScope: "structured-record",
      structuredData: {
        experimentalMethods: ["X-RAY DIFFRACTION"],
        resolutionAngstrom: 1.48,
        keywords: "DE NOVO PROTEIN",
        primaryCitation: {
          title: "Design of three-dimensional domain-swapped dimers and fibrous oligomers.",
          journal: "Proc Natl Acad Sci U S A",
          year: 2001,
          doi: "10.1073/pnas.98.4.1404",
        },
      },
    });
    expect(record.crossReferences.map((x) => x.identifier)).toEqual([
      "10.2210/pdb1g6u/pdb",
      "10.1073/pnas.98.4.1404",
    ]);
    // The citation's year is not the entry's: the export has no release date, so the record has no year.
    expect(record).not.toHaveProperty("year");
  });

  test("1HQJ: X-ray at 1.2 Å; the citation's null DOI is left out, not written as a string", () => {
    const { record } = entry("1HQJ");
    expect(record.structuredData).toMatchObject({
      experimentalMethods: ["X-RAY DIFFRACTION"],
      resolutionAngstrom: 1.2,
    });
    expect(record.structuredData?.primaryCitation).toEqual({
      title: "Design of a minimal protein oligomerization domain by a structural approach.",
      journal: "Protein Sci",
      year: 2000,
    });
    expect(JSON.stringify(record)).not.toContain("null");
    expect(record.crossReferences.map((x) => x.identifier)).toEqual(["10.2210/pdb1hqj/pdb"]);
  });

  test("1JY4: solution NMR with resolution_combined null has no resolution", () => {
    const { record } = entry("1JY4");
    expect(record.structuredData?.experimentalMethods).toEqual(["SOLUTION NMR"]);
    expect(record.structuredData).not.toHaveProperty("resolutionAngstrom");
  });

  test("a multi-method entry keeps every resolution_combined value, not only the first", () => {
    // Edited: 1G6U made a joint X-ray/neutron entry, as RCSB writes one (one exptl row and one
    // resolution_combined value per method).
    const item = items.find((i) => i.identifier === "1G6U")?.data as Record<string, unknown>;
    const joint = {
      ...item,
      exptl: [{ method: "X-RAY DIFFRACTION" }, { method: "NEUTRON DIFFRACTION" }],
      rcsb_entry_info: { ...(item.rcsb_entry_info as object), resolution_combined: [1.48, 2.2] },
    };
    const { record } = parsePdbCoreEntry(answer(joint));
    expect(record.structuredData).toMatchObject({
      experimentalMethods: ["X-RAY DIFFRACTION", "NEUTRON DIFFRACTION"],
      resolutionAngstrom: 1.48,
      resolutionsAngstrom: [1.48, 2.2],
    });
    expect(entry("1G6U").record.structuredData).not.toHaveProperty("resolutionsAngstrom");
  });

  test("an export without struct.title gets the placeholder title and a warning, not an invented one", () => {
    for (const item of items) {
      const { record } = entry(item.identifier);
      expect(record.title).toBe(`[PDB:${item.identifier}: no title]`);
      expect(record.warnings).toEqual(["The provider gave no title for this record."]);
    }
  });

  test("all three as a GraphQL entries answer: same records, none malformed, links on the manifest's hosts", () => {
    const parsed = parsePdbGraphqlEntries(answer({ data: { entries: items.map((i) => i.data) } }));
    expect(parsed.malformed).toBe(0);
    expect(parsed.entries.map((e) => [e.id, e.record.structuredData?.resolutionAngstrom])).toEqual([
      ["1G6U", 1.48],
      ["1HQJ", 1.2],
      ["1JY4", undefined],
    ]);
    const hosts = readManifest("pdb").governance.networkHosts;
    for (const url of resultUrls({ records: parsed.entries.map((e) => e.record) })) {
      expect(hosts).toContain(new URL(url).hostname);
    }
  });
});
