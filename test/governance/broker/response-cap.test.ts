import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import { assertWithinCap, measureResultBytes } from "../../../src/governance/broker/call-upstream.js";

const MB = 1024 * 1024;
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

function capError(result: CallToolResult, maxBytes: number) {
  try {
    assertWithinCap(result, maxBytes);
  } catch (error) {
    if (isGovernanceError(error)) return error;
    throw error;
  }
  return undefined;
}

describe("assertWithinCap", () => {
  test("rejects a 6 MB result against a 5 MB cap with RESPONSE_TOO_LARGE and the sizes", () => {
    const error = capError(text("x".repeat(6 * MB)), 5 * MB);
    expect(error).toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      retryable: false,
      data: { bytes: 6 * MB, maxBytes: 5 * MB },
    });
  });

  test("lets a small result through", () => {
    expect(capError(text("a small answer"), 5 * MB)).toBeUndefined();
  });

  test.each([
    ["multi-byte UTF-8 text (600 chars, 1,200 bytes)", text("é".repeat(600)), 1200],
    [
      "structuredContent as JSON",
      { content: [], structuredContent: { records: ["y".repeat(1000)] } } satisfies CallToolResult,
      1000 + '{"records":[""]}'.length,
    ],
    [
      "text plus structuredContent",
      { content: [{ type: "text", text: "z".repeat(700) }], structuredContent: { a: "b".repeat(500) } },
      700 + 500 + '{"a":""}'.length,
    ],
    [
      "a base64 image",
      {
        content: [{ type: "image", data: "A".repeat(2000), mimeType: "image/png" }],
      } satisfies CallToolResult,
      2000,
    ],
    [
      "an embedded text resource",
      { content: [{ type: "resource", resource: { uri: "file:///x", text: "r".repeat(1500) } }] },
      1500,
    ],
  ] as [string, CallToolResult, number][])("counts %s", (_name, result, bytes) => {
    expect(measureResultBytes(result)).toBe(bytes);
    expect(capError(result, bytes)).toBeUndefined();
    expect(capError(result, bytes - 1)).toMatchObject({ code: "RESPONSE_TOO_LARGE", data: { bytes } });
  });
});
