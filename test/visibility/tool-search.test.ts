import { describe, expect, test } from "vitest";
import { ToolSearchIndex, toolSearchIndexFor } from "../../src/visibility/tool-search.js";
import { sampleTools, surfaceTool } from "./surface-fixtures.js";

const index = new ToolSearchIndex(sampleTools());
const names = (query: string, max?: number) => index.search(query, max).map((hit) => hit.name);

describe("ToolSearchIndex names", () => {
  test("a bare tool id finds its tool first, as a name suffix", () => {
    const [first] = index.search("fetch_abstracts");
    expect(first?.name).toBe("mcp__papers__fetch_abstracts");
    expect(first?.matchedIn[0]).toBe("name-suffix");
    expect(first?.score).toBeGreaterThanOrEqual(1000);
  });

  test.each([
    ["mcp__structures__lookup", "mcp__structures__lookup"],
    ["MCP__Structures__Lookup", "mcp__structures__lookup"],
    ["proteins.search", "mcp__proteins__search"],
    ["proteins__search", "mcp__proteins__search"],
  ])("the exact reference %s ranks first, above the other tools with that id", (query, expected) => {
    const [first, second] = index.search(query);
    expect(first).toMatchObject({ name: expected, matchedIn: expect.arrayContaining(["name"]) });
    expect(first?.score).toBeGreaterThanOrEqual(2000);
    expect(second?.score ?? 0).toBeLessThan(2000);
  });

  test("the end of a name is enough: 'abstracts' finds fetch_abstracts", () => {
    expect(names("abstracts")[0]).toBe("mcp__papers__fetch_abstracts");
  });

  test("a name match outranks a description that repeats the word", () => {
    const tools = [
      surfaceTool("mcp__noisy__search", {
        description: "lookup lookup lookup lookup",
        toolDescription: "lookup lookup lookup",
      }),
      surfaceTool("mcp__quiet__lookup", {
        description: "Fetch one record.",
        toolDescription: "Fetch one record.",
      }),
    ];
    expect(new ToolSearchIndex(tools).search("lookup").map((h) => h.name)).toEqual([
      "mcp__quiet__lookup",
      "mcp__noisy__search",
    ]);
  });
});

describe("ToolSearchIndex select:", () => {
  test("returns exactly the named tools in the order given, by any exact reference", () => {
    const hits = index.search("select:structures.lookup,mcp__papers__fetch_abstracts,nope");
    expect(hits).toEqual([
      { name: "mcp__structures__lookup", score: 1, matchedIn: ["select"] },
      { name: "mcp__papers__fetch_abstracts", score: 1, matchedIn: ["select"] },
    ]);
  });

  test("a bare id shared by several sources selects all of them, even beyond max_results", () => {
    expect(names("select:search", 1)).toEqual(["mcp__papers__search", "mcp__proteins__search"]);
  });

  test("is capped at 20 tools", () => {
    const many = Array.from({ length: 25 }, (_, i) => surfaceTool(`mcp__s${i}__same`));
    expect(new ToolSearchIndex(many).search("select:same")).toHaveLength(20);
  });
});

describe("ToolSearchIndex +term", () => {
  test.each([
    ["+proteins search", ["mcp__proteins__search"]],
    ["+structure", ["mcp__structures__lookup"]],
    ["+abstract +articles", ["mcp__papers__fetch_abstracts", "mcp__papers__search"]],
    ["+nosuchword search", []],
  ])("%s keeps only tools containing every +term", (query, expected) => {
    expect(names(query).sort()).toEqual([...expected].sort());
  });

  test("a +term that is only a function word constrains nothing", () => {
    expect(names("+the search").length).toBeGreaterThan(1);
  });
});

describe("ToolSearchIndex ranking", () => {
  test.each([
    ["protein entries by organism", "mcp__proteins__search", "description"],
    ["literature", "mcp__papers__search", "keywords"],
    ["biomedical", "mcp__papers__search", "source"],
    ["structure_id", "mcp__structures__lookup", "parameters"],
    ["3d crystal", "mcp__structures__lookup", "keywords"],
    ["proteim", "mcp__proteins__search", "keywords"],
    ["prot", "mcp__proteins__search", "keywords"],
  ])("%s -> %s (matched in %s)", (query, expected, field) => {
    const [first] = index.search(query);
    expect(first?.name).toBe(expected);
    expect(first?.matchedIn).toContain(field);
  });

  test.each([
    ["", 0],
    ["   ", 0],
    ["the of and", 0],
  ])("an empty or function-word query %j finds nothing", (query, count) => {
    expect(index.search(query)).toHaveLength(count);
  });

  test.each([
    [undefined, 5],
    [1, 1],
    [50, 20],
  ])("max_results %s returns at most %s hits", (max, expected) => {
    const many = Array.from({ length: 30 }, (_, i) =>
      surfaceTool(`mcp__s${i}__tool`, { toolDescription: "Search gene records." }),
    );
    expect(new ToolSearchIndex(many).search("gene", max)).toHaveLength(expected);
  });

  test("the posting budget scores common words in fewer fields but never drops the rarest word", () => {
    const tools = Array.from({ length: 30 }, (_, i) =>
      surfaceTool(`mcp__s${i}__tool`, { toolDescription: i === 7 ? "common special" : "common words" }),
    );
    const tight = new ToolSearchIndex(tools, { postingBudget: 1 }).search("special common");
    const loose = new ToolSearchIndex(tools, { postingBudget: Number.POSITIVE_INFINITY }).search(
      "special common",
    );
    expect(tight.map((h) => h.name)).toEqual(["mcp__s7__tool"]);
    expect(loose[0]?.name).toBe("mcp__s7__tool");
    expect(loose).toHaveLength(5);
  });
});

describe("toolSearchIndexFor", () => {
  test("builds once per tool list: same array or an equal list share the index, a changed hash does not", () => {
    const tools = sampleTools();
    const first = toolSearchIndexFor(tools);
    expect(toolSearchIndexFor(tools)).toBe(first);
    expect(toolSearchIndexFor([...tools])).toBe(first);
    const changed = tools.map((t, i) => (i === 0 ? { ...t, definitionHash: "other" } : t));
    expect(toolSearchIndexFor(changed)).not.toBe(first);
  });
});
