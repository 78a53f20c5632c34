import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { GovernanceError } from "../../../src/core/errors.js";
import { builtinManifestDir } from "../../../src/governance/manifests/manifest-loader.js";
import type { SourceManifestInput } from "../../../src/governance/manifests/manifest-schema.js";
import { SourceRegistry } from "../../../src/governance/manifests/source-registry.js";
import { makeSource, makeTool } from "./manifest-factory.js";

const fixtures = resolve(import.meta.dirname, "../../fixtures/manifests");

function thrown(fn: () => unknown): GovernanceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GovernanceError);
    return error as GovernanceError;
  }
  throw new Error("expected a GovernanceError");
}

function withLimits(id: string, limits: Partial<SourceManifestInput["governance"]>): SourceManifestInput {
  const base = makeSource({ id });
  return { ...base, governance: { ...base.governance, rateLimitGroup: "ncbi", ...limits } };
}

describe("SourceRegistry", () => {
  test("registers, lists in order and finds tools", () => {
    const registry = new SourceRegistry();
    registry.register(
      makeSource({ id: "pubmed", tools: [makeTool({ id: "search" }), makeTool({ id: "fetch" })] }),
    );
    registry.register(makeSource({ id: "arxiv" }));
    expect(registry.list().map((m) => m.id)).toEqual(["pubmed", "arxiv"]);
    expect(registry.has("arxiv")).toBe(true);
    expect(registry.has("geo")).toBe(false);
    expect(registry.get("pubmed").tools).toHaveLength(2);
    expect(registry.findTool("pubmed", "fetch")?.mcpToolName).toBe("fetch");
    expect(registry.findTool("pubmed", "nope")).toBeUndefined();
    expect(registry.findTool("geo", "search")).toBeUndefined();
  });

  test("a duplicate id is a DUPLICATE_ID naming both origins", () => {
    const registry = new SourceRegistry();
    registry.register(makeSource({ id: "pubmed" }), { origin: "builtin/pubmed.json" });
    const error = thrown(() =>
      registry.register(makeSource({ id: "pubmed" }), { origin: "mine/pubmed.json" }),
    );
    expect(error.code).toBe("DUPLICATE_ID");
    expect(error.message).toContain("'pubmed'");
    expect(error.message).toContain("builtin/pubmed.json");
    expect(error.message).toContain("mine/pubmed.json");
    expect(registry.list()).toHaveLength(1);
  });

  test("an unknown id is an UNKNOWN_ID listing the known ids", () => {
    const registry = new SourceRegistry();
    registry.register(makeSource({ id: "pubmed" }));
    registry.register(makeSource({ id: "arxiv" }));
    const error = thrown(() => registry.get("pubmd"));
    expect(error.code).toBe("UNKNOWN_ID");
    expect(error.message).toContain("'pubmd'");
    expect(error.message).toContain("pubmed, arxiv");
  });

  test("register validates plain objects and rejects an invalid one with INVALID_MANIFEST", () => {
    const registry = new SourceRegistry();
    const bad = { ...makeSource(), kind: "poetry" } as unknown as SourceManifestInput;
    const error = thrown(() => registry.register(bad, { origin: "inline.json" }));
    expect(error.code).toBe("INVALID_MANIFEST");
    expect(error.message).toMatch(/inline\.json[\s\S]*kind:/);
    expect(registry.has("demo")).toBe(false);
  });

  test("fromDirs loads each folder; a duplicate across folders names both files", async () => {
    const registry = await SourceRegistry.fromDirs([resolve(fixtures, "valid")]);
    expect(registry.list().map((m) => m.id)).toEqual(["alpha", "beta"]);
    const error = await SourceRegistry.fromDirs([
      resolve(fixtures, "valid"),
      resolve(fixtures, "valid"),
    ]).then(
      () => undefined,
      (e: unknown) => e as GovernanceError,
    );
    expect(error?.code).toBe("DUPLICATE_ID");
    expect(error?.message).toMatch(/alpha\.json.*alpha\.json/);
  });

  test("fromDirs fails on an invalid manifest with file and path", async () => {
    const error = await SourceRegistry.fromDirs([resolve(fixtures, "invalid")]).then(
      () => undefined,
      (e: unknown) => e as GovernanceError,
    );
    expect(error?.code).toBe("INVALID_MANIFEST");
    expect(error?.message).toMatch(/broken-fields\.json[\s\S]*tools\[1\]\.permission\.action/);
  });

  test("every built-in manifest in manifests/ is valid and ids are unique", async () => {
    const registry = await SourceRegistry.fromDirs([builtinManifestDir()]);
    for (const manifest of registry.list()) expect(manifest.tools.length).toBeGreaterThan(0);
  });
});

describe("rate-limit groups", () => {
  test("sources of one group resolve to the stricter value per dimension, with a warning each", () => {
    const registry = new SourceRegistry();
    registry.register(
      withLimits("pubmed", { maxConcurrentRequests: 3, minIntervalMs: 100, maxQueueDepth: 50 }),
    );
    registry.register(
      withLimits("pmc", {
        maxConcurrentRequests: 5,
        minIntervalMs: 340,
        rateLimitPerSecond: 3,
        queueTimeoutMs: 9000,
      }),
    );
    expect(registry.rateLimitGroups().get("ncbi")).toEqual({
      maxConcurrentRequests: 3,
      minIntervalMs: 340,
      rateLimitPerSecond: 3,
      maxQueueDepth: 50,
      queueTimeoutMs: 9000,
    });
    expect(registry.warnings).toHaveLength(5);
    expect(registry.warnings.join("\n")).toMatch(
      /'ncbi'.*'pmc'.*minIntervalMs.*340.*'pubmed'.*100.*stricter 340/,
    );
    expect(registry.warnings.join("\n")).toMatch(/maxQueueDepth to unlimited \(unset\).*set 50.*stricter 50/);
  });

  test.each([
    ["maxConcurrentRequests", 4, 2, 2],
    ["minIntervalMs", 100, 250, 250],
    ["rateLimitPerSecond", 10, 2.5, 2.5],
    ["maxQueueDepth", 0, 20, 0],
    ["queueTimeoutMs", 5000, 1000, 1000],
  ] as const)("%s: %d vs %d resolves to %d", (dimension, a, b, expected) => {
    const registry = new SourceRegistry();
    registry.register(withLimits("one", { [dimension]: a }));
    registry.register(withLimits("two", { [dimension]: b }));
    expect(registry.rateLimitGroups().get("ncbi")?.[dimension]).toBe(expected);
    expect(registry.warnings).toEqual([expect.stringContaining(dimension)]);
  });

  test("agreeing sources and separate groups produce no warning", () => {
    const registry = new SourceRegistry();
    registry.register(withLimits("one", { maxConcurrentRequests: 2 }));
    registry.register(withLimits("two", { maxConcurrentRequests: 2 }));
    registry.register(makeSource({ id: "solo" }));
    expect(registry.warnings).toEqual([]);
    expect([...registry.rateLimitGroups()]).toEqual([
      ["ncbi", { maxConcurrentRequests: 2 }],
      ["solo", {}],
    ]);
  });
});
