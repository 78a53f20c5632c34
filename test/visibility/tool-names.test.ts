import { describe, expect, test } from "vitest";
import { isGovernanceError } from "../../src/core/errors.js";
import {
  buildToolNameTable,
  MAX_TOOL_NAME_LENGTH,
  modelVisibleName,
} from "../../src/visibility/tool-names.js";

describe("modelVisibleName", () => {
  test.each([
    ["pubmed", "search", "mcp__pubmed__search"],
    ["europe-pmc", "prepare_paper_download", "mcp__europe-pmc__prepare_paper_download"],
    ["llm.wiki", "get page", "mcp__llm_wiki__get_page"],
    ["ünï", "tool/x", "mcp___n___tool_x"],
  ])("%s/%s -> %s", (source, tool, expected) => {
    expect(modelVisibleName(source, tool)).toBe(expected);
  });

  test("shortens long names to 64 characters with a stable hash suffix", () => {
    const long = modelVisibleName(
      "a-very-long-source-identifier-from-a-user",
      "and_an_even_longer_tool_identifier_name",
    );
    expect(long).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(long).toMatch(/^mcp__a-very-long-source-identifier.*_[0-9a-f]{8}$/);
    expect(
      modelVisibleName(
        "a-very-long-source-identifier-from-a-user",
        "and_an_even_longer_tool_identifier_name",
      ),
    ).toBe(long);
    const other = modelVisibleName(
      "a-very-long-source-identifier-from-a-user",
      "and_an_even_longer_tool_identifier_nam2",
    );
    expect(other).not.toBe(long);
  });
});

describe("buildToolNameTable", () => {
  test("maps names to tools", () => {
    const table = buildToolNameTable([
      { sourceId: "pubmed", toolId: "search" },
      { sourceId: "arxiv", toolId: "search" },
    ]);
    expect([...table.keys()]).toEqual(["mcp__pubmed__search", "mcp__arxiv__search"]);
  });

  test("rejects two tools that sanitize to the same name", () => {
    let caught: unknown;
    try {
      buildToolNameTable([
        { sourceId: "a.b", toolId: "x" },
        { sourceId: "a_b", toolId: "x" },
      ]);
    } catch (error) {
      caught = error;
    }
    expect(isGovernanceError(caught) && caught.code).toBe("DUPLICATE_ID");
    expect(String((caught as Error).message)).toContain("a.b/x and a_b/x");
  });
});
