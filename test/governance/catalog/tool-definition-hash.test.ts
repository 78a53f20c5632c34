import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { toolDefinitionHash } from "../../../src/governance/catalog/match-tools.js";

const base: Tool = {
  name: "search",
  description: "Search papers.",
  inputSchema: {
    type: "object",
    properties: { q: { type: "string" }, n: { type: "integer" } },
    required: ["q"],
  },
  annotations: { readOnlyHint: true },
};

describe("toolDefinitionHash", () => {
  test("is a stable hex sha256 that ignores key order", () => {
    const reordered: Tool = {
      annotations: { readOnlyHint: true },
      inputSchema: {
        required: ["q"],
        properties: { n: { type: "integer" }, q: { type: "string" } },
        type: "object",
      },
      description: "Search papers.",
      name: "search",
    };
    expect(toolDefinitionHash(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(toolDefinitionHash(reordered)).toBe(toolDefinitionHash(base));
  });

  test.each<[string, Tool]>([
    ["name", { ...base, name: "search2" }],
    ["description", { ...base, description: "Search papers and preprints." }],
    ["inputSchema", { ...base, inputSchema: { ...base.inputSchema, required: ["q", "n"] } }],
    ["outputSchema", { ...base, outputSchema: { type: "object", properties: { hits: { type: "array" } } } }],
    ["annotations", { ...base, annotations: { readOnlyHint: false } }],
  ])("changes when the %s changes", (_field, changed) => {
    expect(toolDefinitionHash(changed)).not.toBe(toolDefinitionHash(base));
  });

  test("ignores presentation-only fields (title, _meta)", () => {
    expect(toolDefinitionHash({ ...base, title: "Paper search", _meta: { ui: 1 } })).toBe(
      toolDefinitionHash(base),
    );
  });
});
