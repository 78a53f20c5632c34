import { describe, expect, test } from "vitest";
import { MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import { effectiveRateLimits } from "../../../src/governance/rate-limit/effective-rate-limits.js";
import { createGovernance } from "../../../src/runtime/create-governance.js";

const manifests = new Map([
  ["ncbi-eutils", { rateLimitPerSecond: 3, maxConcurrentRequests: 3, maxQueueDepth: 8 }],
  ["ebi-www", { rateLimitPerSecond: 5, maxConcurrentRequests: 2 }],
]);

describe("effectiveRateLimits", () => {
  test.each([
    ["no key: the manifests' 3/s", {}, 3],
    ["NCBI_API_KEY raises ncbi-eutils to 10/s", { NCBI_API_KEY: "k" }, 10],
    ["a blank key counts as none", { NCBI_API_KEY: "  " }, 3],
  ])("%s", (_name, env, rate) => {
    const groups = effectiveRateLimits(manifests, { env });
    expect(groups.get("ncbi-eutils")).toEqual({
      rateLimitPerSecond: rate,
      maxConcurrentRequests: 3,
      maxQueueDepth: 8,
    });
    expect(groups.get("ebi-www")).toEqual({ rateLimitPerSecond: 5, maxConcurrentRequests: 2 });
  });

  test("the key never loosens a manifest that is already faster or stricter by choice", () => {
    const strict = new Map([["ncbi-eutils", { rateLimitPerSecond: 12 }]]);
    expect(effectiveRateLimits(strict, { env: { NCBI_API_KEY: "k" } }).get("ncbi-eutils")).toEqual({
      rateLimitPerSecond: 12,
    });
  });

  test("app overrides win per field, add groups, and leave the input map untouched", () => {
    const groups = effectiveRateLimits(manifests, {
      env: { NCBI_API_KEY: "k" },
      overrides: {
        "ncbi-eutils": { rateLimitPerSecond: 8 },
        "my-server": { maxConcurrentRequests: 1 },
      },
    });
    expect(groups.get("ncbi-eutils")).toEqual({
      rateLimitPerSecond: 8,
      maxConcurrentRequests: 3,
      maxQueueDepth: 8,
    });
    expect(groups.get("my-server")).toEqual({ maxConcurrentRequests: 1 });
    expect(manifests.get("ncbi-eutils")?.rateLimitPerSecond).toBe(3);
  });
});

describe("createGovernance rate limits", () => {
  const open = (env: Record<string, string>, rateLimits?: Record<string, { rateLimitPerSecond: number }>) =>
    createGovernance({
      config: { mcpServers: {} },
      manifests: {
        // The built-in groups without starting their server.
        builtin: true,
      },
      env,
      storage: {
        ledger: new MemoryLedger(),
        contentStore: new MemoryContentStore(),
        grants: new MemoryGrantStore(),
      },
      ...(rateLimits ? { limits: { rateLimits } } : {}),
    });

  test.each([
    ["without a key", {}, undefined, 3],
    ["with NCBI_API_KEY", { NCBI_API_KEY: "secret" }, undefined, 10],
    ["with an app override", { NCBI_API_KEY: "secret" }, { "ncbi-eutils": { rateLimitPerSecond: 6 } }, 6],
  ])("the built-in ncbi-eutils group %s", async (_name, env, rateLimits, rate) => {
    const governance = await open(env, rateLimits);
    try {
      expect(governance.rateLimits.get("ncbi-eutils")?.rateLimitPerSecond).toBe(rate);
      expect(governance.rateLimits.get("arxiv-api")).toBeDefined();
    } finally {
      await governance.close();
    }
  });
});
