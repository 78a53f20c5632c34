import { describe, expect, test } from "vitest";
import { NameIndex } from "../../src/visibility/name-index.js";

const tools = [
  {
    name: "mcp__pubmed__fetch_abstracts",
    qualifiedName: "pubmed.fetch_abstracts",
    sourceId: "pubmed",
    toolId: "fetch_abstracts",
  },
  { name: "mcp__pubmed__search", qualifiedName: "pubmed.search", sourceId: "pubmed", toolId: "search" },
  { name: "mcp__uniprot__search", qualifiedName: "uniprot.search", sourceId: "uniprot", toolId: "search" },
];
const index = new NameIndex(tools);

describe("NameIndex", () => {
  test.each([
    ["mcp__pubmed__search", [1]],
    [" PubMed.Search ", [1]],
    ["uniprot__search", [2]],
    ["search", [1, 2]],
    ["fetch_abstracts", [0]],
    ["abstracts", []],
    ["nope", []],
  ])("resolve(%j) -> %j", (ref, expected) => {
    expect(index.resolve(ref)).toEqual(expected);
  });

  test.each([
    ["mcp__pubmed__search", [[1, "exact"]]],
    ["fetch_abstracts", [[0, "suffix"]]],
    ["abstracts", [[0, "suffix"]]],
    ["pubmed__fetch_abstracts", [[0, "exact"]]],
    [
      "search",
      [
        [1, "suffix"],
        [2, "suffix"],
      ],
    ],
    ["fetch abstracts", []],
    ["etch_abstracts", []],
  ])("matches(%j) -> %j", (query, expected) => {
    expect([...index.matches(query)].sort()).toEqual(expected);
  });
});
