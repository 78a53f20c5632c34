import { describe, expect, test } from "vitest";
import { QueryPlanner } from "../../src/visibility/query-planner.js";

/** A planner that has seen `rare` in 1 tool, `mid` in 5 and `common` in 50, each in the description. */
function planner(budget: number): QueryPlanner {
  const p = new QueryPlanner(budget);
  for (let tool = 0; tool < 50; tool++) {
    p.count("common", "description", tool);
    p.count("common", "description", tool); // twice in one tool still counts once
    if (tool < 5) p.count("mid", "description", tool);
    if (tool === 0) p.count("rare", "name", tool);
  }
  return p;
}

describe("QueryPlanner", () => {
  test("scores known words rarest first, exactly; unknown words may match as prefix or with a typo", () => {
    expect(planner(1000).plan("Common the MID rare unknownword")).toEqual([
      { queries: ["unknownword"], prefix: true, fuzzy: 1 },
      {
        queries: ["rare"],
        prefix: false,
        fuzzy: false,
        fields: ["name", "keywords", "description", "source", "parameters", "kind"],
      },
      {
        queries: ["mid"],
        prefix: false,
        fuzzy: false,
        fields: ["name", "keywords", "description", "source", "parameters", "kind"],
      },
      {
        queries: ["common"],
        prefix: false,
        fuzzy: false,
        fields: ["name", "keywords", "description", "source", "parameters", "kind"],
      },
    ]);
  });

  test("past the budget a common word is scored in the name fields only; the rarest word always in full", () => {
    const plan = planner(10).plan("common mid");
    expect(plan).toEqual([
      {
        queries: ["mid"],
        prefix: false,
        fuzzy: false,
        fields: ["name", "keywords", "description", "source", "parameters", "kind"],
      },
      { queries: ["common"], prefix: false, fuzzy: false, fields: ["name", "keywords"] },
    ]);
    expect(planner(1).plan("common")).toEqual([
      {
        queries: ["common"],
        prefix: false,
        fuzzy: false,
        fields: ["name", "keywords", "description", "source", "parameters", "kind"],
      },
    ]);
  });

  test.each([
    ["abc", { queries: ["abc"], prefix: false, fuzzy: false }],
    ["abcd", { queries: ["abcd"], prefix: true, fuzzy: false }],
  ])("short unknown word %s gets no fuzzy matching", (word, expected) => {
    expect(planner(1000).plan(word)).toEqual([expected]);
  });
});
