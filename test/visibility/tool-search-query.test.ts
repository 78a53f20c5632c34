import { describe, expect, test } from "vitest";
import { clampMaxResults, parseToolSearchQuery } from "../../src/visibility/tool-search-query.js";

describe("parseToolSearchQuery", () => {
  test.each([
    ["select:a,b", { kind: "select", names: ["a", "b"] }],
    [
      "  SELECT: mcp__pubmed__search , arxiv.lookup,, ",
      { kind: "select", names: ["mcp__pubmed__search", "arxiv.lookup"] },
    ],
    ["select:a,a", { kind: "select", names: ["a"] }],
    ["select:", { kind: "select", names: [] }],
    ["protein structure", { kind: "search", required: [], text: "protein structure" }],
    ["+clinvar brca1  variants", { kind: "search", required: ["clinvar"], text: "clinvar brca1 variants" }],
    ["+a +b rest", { kind: "search", required: ["a", "b"], text: "a b rest" }],
    ["c++ + x", { kind: "search", required: [], text: "c++ + x" }],
  ])("%j", (query, expected) => {
    expect(parseToolSearchQuery(query)).toEqual(expected);
  });
});

describe("clampMaxResults", () => {
  test.each([
    [undefined, 5],
    [0, 1],
    [3, 3],
    [7.9, 7],
    [20, 20],
    [500, 20],
    [Number.NaN, 5],
  ])("%s -> %s", (requested, expected) => {
    expect(clampMaxResults(requested)).toBe(expected);
  });
});
