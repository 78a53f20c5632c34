import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, test } from "vitest";
import { builtinManifestDir, loadManifestDir } from "../../src/governance/manifests/manifest-loader.js";
import { renderDeferredToolsSection } from "../../src/visibility/deferred-tools-section.js";
import { estimateTokens } from "../../src/visibility/estimate-tokens.js";
import { ToolSurface } from "../../src/visibility/tool-surface.js";
import { syntheticManifests } from "./synthetic-catalog.js";

const encoder = new Tiktoken(o200kBase);
const o200k = (text: string) => encoder.encode(text).length;

describe("estimateTokens", () => {
  test("counts letter runs, digit groups, newlines and symbols; spaces are free", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("   ")).toBe(0);
    expect(estimateTokens("abc")).toBe(1);
    expect(estimateTokens("abcdefgh")).toBe(2);
    expect(estimateTokens("PubMed")).toBe(2);
    expect(estimateTokens("1234567")).toBe(3);
    expect(estimateTokens("a\nb")).toBe(3);
    expect(estimateTokens("mcp__pubmed__search: Search PubMed.")).toBe(12);
  });

  test("over-counts o200k by at most 35 % on whole sections of every tier, never under", async () => {
    const builtin = ToolSurface.fromManifests(await loadManifestDir(builtinManifestDir()));
    const catalogs = [
      builtin,
      ...[100, 1_000, 10_000].map((tools) => ToolSurface.fromManifests(syntheticManifests({ tools }))),
    ];
    const ratios: string[] = [];
    for (const tools of catalogs) {
      for (const tokenBudget of [Number.POSITIVE_INFINITY, 20_000, 2_500, 800]) {
        const { text, tier } = renderDeferredToolsSection(tools, { tokenBudget });
        const ratio = estimateTokens(text) / o200k(text);
        ratios.push(`${tools.length} tools, ${tier}: ${ratio.toFixed(2)}`);
        expect(ratio, ratios.at(-1)).toBeGreaterThanOrEqual(1);
        expect(ratio, ratios.at(-1)).toBeLessThanOrEqual(1.35);
      }
    }
  });
});
