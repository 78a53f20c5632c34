import { describe, expect, test } from "vitest";
import { promote, promotionReducer } from "../../src/visibility/promotion.js";
import { builtinSurfaceTool } from "../../src/visibility/surface-tool.js";
import {
  checkToolCall,
  isCallable,
  searchFirstError,
  visibleToolSchemas,
} from "../../src/visibility/visible-tools.js";
import { surfaceTool } from "./surface-fixtures.js";

const download = builtinSurfaceTool({
  name: "artifact_download",
  description: "Download a candidate.",
  inputSchema: { type: "object", properties: { candidateId: { type: "string" } } },
});
const tools = [surfaceTool("mcp__a__search"), surfaceTool("mcp__b__lookup"), download];
const state = promotionReducer(undefined, promote(["mcp__b__lookup"], tools));
const changed = tools.map((t) => (t.name === "mcp__b__lookup" ? { ...t, definitionHash: "v2" } : t));

describe("visibleToolSchemas", () => {
  test("binds built-ins and promoted deferred tools only, with their full schemas", () => {
    expect(visibleToolSchemas(tools, state)).toEqual([
      { name: "mcp__b__lookup", description: "The lookup tool of b.", inputSchema: tools[1]?.inputSchema },
      { name: "artifact_download", description: "Download a candidate.", inputSchema: download.inputSchema },
    ]);
  });

  test("before any promotion only built-ins are bound; a stale promotion is withdrawn", () => {
    expect(visibleToolSchemas(tools, undefined).map((t) => t.name)).toEqual(["artifact_download"]);
    expect(visibleToolSchemas(changed, state).map((t) => t.name)).toEqual(["artifact_download"]);
  });
});

describe("isCallable and checkToolCall", () => {
  test.each([
    ["promoted", "mcp__b__lookup", tools, true, undefined],
    ["built-in", "artifact_download", tools, true, undefined],
    ["deferred, never searched", "mcp__a__search", tools, false, "not_promoted"],
    ["promoted, then changed", "mcp__b__lookup", changed, false, "stale"],
    ["not in the session at all", "mcp__zz__nope", tools, false, "unknown_tool"],
  ])("%s: %s", (_label, name, list, callable, reason) => {
    expect(isCallable(name, state, list)).toBe(callable);
    const error = checkToolCall(name, state, list);
    expect(error?.data?.reason).toBe(reason);
    if (error) expect(error.code).toBe("TOOL_UNAVAILABLE");
  });

  test("an unknown name is not retryable: searching again cannot make it exist", () => {
    expect(checkToolCall("mcp__zz__nope", state, tools)?.retryable).toBe(false);
  });
});

describe("searchFirstError", () => {
  test("is a retryable TOOL_UNAVAILABLE telling the model to call tool_search with select:", () => {
    const body = searchFirstError("mcp__a__search");
    expect(body).toEqual({
      code: "TOOL_UNAVAILABLE",
      message: expect.stringContaining("call tool_search first (e.g. select:mcp__a__search)"),
      retryable: true,
      attempts: 0,
      data: { reason: "not_promoted", name: "mcp__a__search" },
    });
    expect(body.message).toContain("nothing was executed");
  });

  test("the stale variant says the definition changed", () => {
    expect(searchFirstError("mcp__b__lookup", "stale")).toMatchObject({
      retryable: true,
      message: expect.stringMatching(/definition .* changed/),
      data: { reason: "stale" },
    });
  });
});
