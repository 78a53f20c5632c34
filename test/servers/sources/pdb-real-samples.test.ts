/**
 * The PDB parsers over real answers captured in ../shared/fixtures/providers/pdb (see README.txt there for
 * their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parsePdbSearch } from "../../../src/servers/sources/pdb/pdb-search.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const folder = path.join(SHARED_PROVIDER_SAMPLES, "pdb");
const hasSamples = existsSync(folder);
const suffix = hasSamples ? "" : ` (SKIPPED: ${folder} not found)`;

describe.skipIf(!hasSamples)(`real PDB samples${suffix}`, () => {
  test("Search API v2 entry page: total, ten ids in score order, Jackson-style JSON", () => {
    const text = readFileSync(path.join(folder, "search_v2_entry_full_text_10hits.json"), "utf8");
    const page = parsePdbSearch({ text, host: "sample", status: 200 });
    expect(page.total).toBe(24742);
    expect(page.hits).toHaveLength(10);
    expect(page.hits[0]).toEqual({ id: "1QEZ", score: 1 });
    expect(page.hits.map((hit) => hit.id)).toEqual([
      "1QEZ",
      "5TY5",
      "5TEA",
      "3EMJ",
      "3FQ3",
      "3Q3L",
      "1UDE",
      "4Z74",
      "3R5V",
      "3R6E",
    ]);
    const scores = page.hits.map((hit) => hit.score ?? 0);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });
});
