/**
 * The UniProt parser over real answers captured in ../shared/fixtures/providers/uniprot (see README.txt there
 * for their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { parseUniprotResults } from "../../../src/servers/sources/uniprot/uniprot-entry-parser.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const folder = path.join(SHARED_PROVIDER_SAMPLES, "uniprot");
const hasSamples = existsSync(folder);
const suffix = hasSamples ? "" : ` (SKIPPED: ${folder} not found)`;
const sample = (file: string): string => readFileSync(path.join(folder, file), "utf8");
const answer = (text: string): ProviderAnswer => ({ text, host: "sample", status: 200 });

describe.skipIf(!hasSamples)(`real UniProt samples${suffix}`, () => {
  test("search (BRAF, reviewed, human): one Swiss-Prot entry with names, genes, function and PDB links", () => {
    const parsed = parseUniprotResults(answer(sample("search_json_REDUCED.json")));
    expect(parsed).toMatchObject({ inactive: [], malformed: 0, facetTotal: undefined });
    expect(parsed.entries).toHaveLength(1);
    const [entry] = parsed.entries;
    expect(entry?.record).toMatchObject({
      identifier: "P15056",
      title: "Serine/threonine-protein kinase B-raf",
      url: "https://www.uniprot.org/uniprotkb/P15056/entry",
      contentScope: "structured-record",
      structuredData: {
        entryName: "BRAF_HUMAN",
        reviewed: true,
        genes: ["BRAF"],
        geneSynonyms: ["BRAF1", "RAFB1"],
        organism: { taxonId: 9606 },
        sequenceLength: 766,
        pdbStructureCount: 6,
      },
      warnings: [],
    });
    expect(entry?.record.structuredData?.function).toMatch(/^Protein kinase involved in the transduction/);
    expect(entry?.record.crossReferences.map((x) => [x.identifierType, x.identifier])).toEqual([
      ["pdb", "1UWH"],
      ["pdb", "1UWJ"],
      ["pdb", "2FB8"],
      ["pdb", "2L05"],
      ["pdb", "3C4C"],
      ["pdb", "3D4Q"],
      ["alphafold", "P15056"],
    ]);
  });

  test("the P15056 entry, in the results list the accessions endpoint wraps entries in, parses alike", () => {
    const entry = JSON.parse(sample("entry_P15056_json_REDUCED.json"));
    const parsed = parseUniprotResults(answer(JSON.stringify({ results: [entry] })));
    expect(parsed.entries.map((e) => e.record.identifier)).toEqual(["P15056"]);
    const hosts = readManifest("uniprot").governance.networkHosts;
    for (const url of resultUrls({ records: parsed.entries.map((e) => e.record) })) {
      expect(url.startsWith("https://"), url).toBe(true);
      expect(hosts).toContain(new URL(url).hostname);
    }
  });

  test("a single entry is not a list answer: malformed, not an empty success", () => {
    expect(() => parseUniprotResults(answer(sample("entry_P15056_json_REDUCED.json")))).toThrow(
      expect.objectContaining({ name: "ProviderError", code: "upstream_unavailable" }),
    );
  });
});
