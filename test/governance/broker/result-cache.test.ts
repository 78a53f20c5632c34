import { describe, expect, test } from "vitest";
import type { McpToolResult } from "../../../src/contract/result-types.js";
import { jsonObject } from "../../../src/governance/audit/content-object.js";
import { type CachedResult, ResultCache } from "../../../src/governance/broker/result-cache.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";

function result(note: string): McpToolResult {
  return {
    records: [],
    warnings: [note],
    attribution: "a",
    license: "l",
    retrievedAt: "2026-01-01T00:00:00.000Z",
    sourceId: "s",
    toolId: "t",
    untrusted: true,
  };
}

/** A cache entry as the broker makes it: the result and its stored object. */
function entry(note: string): CachedResult {
  const value = result(note);
  return { result: value, normalized: jsonObject(value) };
}

describe("ResultCache", () => {
  test("keys ignore property order but not values or version", () => {
    const a = ResultCache.key({ sourceId: "s", toolId: "t", version: "1", input: { a: 1, b: 2 } });
    const b = ResultCache.key({ sourceId: "s", toolId: "t", version: "1", input: { b: 2, a: 1 } });
    const c = ResultCache.key({ sourceId: "s", toolId: "t", version: "2", input: { a: 1, b: 2 } });
    const d = ResultCache.key({ sourceId: "s", toolId: "t", version: "1", input: { a: 1, b: 3 } });
    expect(a).toBe(b);
    expect(new Set([a, c, d]).size).toBe(3);
  });

  test("entries expire after their TTL on the injected clock", async () => {
    const clock = new ManualClock(1_000);
    const cache = new ResultCache({ clock });
    cache.set("k", entry("x"), 60);
    expect(cache.get("k")?.result.warnings).toEqual(["x"]);
    await clock.advance(59_999);
    expect(cache.get("k")).toBeDefined();
    await clock.advance(2);
    expect(cache.get("k")).toBeUndefined();
  });

  test("a zero TTL stores nothing", () => {
    const cache = new ResultCache();
    cache.set("k", entry("x"), 0);
    expect(cache.get("k")).toBeUndefined();
  });

  test("evicts least recently used entries past the byte budget", () => {
    const one = entry("0").normalized.size;
    const cache = new ResultCache({ maxBytes: one * 3 });
    for (let i = 0; i < 5; i++) cache.set(`k${i}`, entry(String(i)), 60);
    expect(cache.size).toBe(3);
    expect(cache.get("k0")).toBeUndefined();
    expect(cache.get("k4")).toBeDefined();
    expect(cache.bytes).toBeLessThanOrEqual(one * 3);
  });
});
