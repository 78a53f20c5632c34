/**
 * Retrieval quality of `tool_search` on the built-in catalog (issue 5): recall@3 and recall@5 over
 * a labelled set of natural requests. Run `npx vitest run test/visibility/retrieval-quality.test.ts`
 * to see the numbers and every miss.
 */
import { describe, expect, test } from "vitest";
import { builtinManifestDir, loadManifestDir } from "../../src/governance/manifests/manifest-loader.js";
import { ToolSearchIndex } from "../../src/visibility/tool-search.js";
import { ToolSurface } from "../../src/visibility/tool-surface.js";
import { evaluableQueries, LABELLED_QUERIES } from "./retrieval-queries.js";

const TARGET_RECALL_AT_3 = 0.9;

const sourceOf = (name: string) => name.split("__")[1] ?? "";

describe("tool_search retrieval quality on the built-in catalog", async () => {
  const manifests = await loadManifestDir(builtinManifestDir());
  const tools = ToolSurface.fromManifests(manifests);
  const index = new ToolSearchIndex(tools);
  const sources = new Set(manifests.map((m) => m.id));
  const queries = evaluableQueries(sources);

  test("at least 40 queries are evaluated, their labels name existing tools, every source is covered", () => {
    expect(queries.length).toBeGreaterThanOrEqual(40);
    const names = new Set(tools.map((t) => t.name));
    const unknown = queries
      .flatMap((q) => q.expected)
      .filter((name) => sources.has(sourceOf(name)) && !names.has(name));
    expect(unknown, "labels naming tools that are not in manifests/").toEqual([]);
    const covered = new Set(queries.flatMap((q) => q.expected).map(sourceOf));
    expect(
      [...sources].filter((id) => !covered.has(id)),
      "sources without labelled queries",
    ).toEqual([]);
  });

  test(`recall@3 >= ${TARGET_RECALL_AT_3} (recall@5 reported)`, () => {
    let at3 = 0;
    let at5 = 0;
    const misses: string[] = [];
    for (const { query, expected } of queries) {
      const ranked = index.search(query, 5).map((hit) => hit.name);
      const rank = ranked.findIndex((name) => expected.includes(name));
      if (rank >= 0 && rank < 3) at3++;
      if (rank >= 0) at5++;
      if (rank < 0 || rank >= 3) {
        misses.push(`  "${query}": got ${ranked.slice(0, 3).join(", ")}; expected ${expected.join(" or ")}`);
      }
    }
    const n = queries.length;
    const recall3 = at3 / n;
    const recall5 = at5 / n;
    console.info(
      `tool_search on ${tools.length} built-in tools, ${n} labelled queries: ` +
        `recall@3 = ${recall3.toFixed(3)}, recall@5 = ${recall5.toFixed(3)} ` +
        `(${LABELLED_QUERIES.length - n} queries wait for a source not in manifests/)` +
        (misses.length ? `\nmisses at 3:\n${misses.join("\n")}` : ""),
    );
    expect(recall3).toBeGreaterThanOrEqual(TARGET_RECALL_AT_3);
    expect(recall5).toBeGreaterThanOrEqual(recall3);
  });
});
