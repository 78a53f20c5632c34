import { describe, expect, test } from "vitest";
import { validateManifest } from "../../../src/governance/manifests/manifest-loader.js";
import type { SourceManifestInput } from "../../../src/governance/manifests/manifest-schema.js";
import { makeSource, makeTool } from "./manifest-factory.js";

const REMOVE = Symbol("remove");

/** A deep copy of `manifest` with the value at a JSON path (`tools[0].id`) replaced or removed. */
function withValue(manifest: SourceManifestInput, path: string, value: unknown): unknown {
  const copy: unknown = structuredClone(manifest);
  const keys = path.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== "");
  let node = copy as Record<string, unknown>;
  // A missing object on the way (an optional block) is created.
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys.at(-1) as string;
  if (value === REMOVE) delete node[last];
  else node[last] = value;
  return copy;
}

describe("source manifest schema", () => {
  test("accepts a complete manifest and fills retryPolicy with {}", () => {
    const result = validateManifest(makeSource());
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.manifest.tools[0]?.retryPolicy).toEqual({});
  });

  test.each<[string, string, unknown, RegExp, string?]>([
    ["uppercase source id", "id", "PubMed", /\[a-z0-9\]/],
    ["missing displayName", "displayName", REMOVE, /required field is missing \(expected string\)/],
    ["unknown kind", "kind", "poetry", /knowledge-base/],
    ["unknown surface policy", "surface.prompts", "sometimes", /approval/],
    ["unknown surface part", "surface.tools", "allowed", /unknown field/],
    ["enabledByDefault as string", "enabledByDefault", "yes", /boolean/],
    ["blank mcpServerId", "transport.mcpServerId", " ", /empty/],
    ["negative cache ttl", "cache.ttlSeconds", -1, />=0/],
    ["caveats not an array", "prompt.caveats", "none", /array/],
    ["termsUrl not http(s)", "governance.termsUrl", "ftp://x.org", /http/],
    ["unknown data classification", "governance.dataClassification", "secret", /public/],
    ["network host with a scheme", "governance.networkHosts[0]", "https://bad.org/x", /host name/],
    ["zero maxResponseBytes", "governance.maxResponseBytes", 0, />=1/],
    ["zero rateLimitPerSecond", "governance.rateLimitPerSecond", 0, />0/],
    ["fractional maxConcurrentRequests", "governance.maxConcurrentRequests", 1.5, /int/],
    ["no tools", "tools", [], /at least one tool/],
    ["tool id with a dot", "tools[0].id", "a.b", /\[a-z0-9\]/],
    ["unknown tool kind", "tools[0].kind", "download", /artifact-plan/],
    ["non-object input schema", "tools[0].inputSchema.type", "array", /"object"/],
    ["property schema that is a string", "tools[0].inputSchema.properties.query", "string", /JSON Schema/],
    ["missing permission action", "tools[0].permission.action", REMOVE, /missing/],
    ["priority above 100", "tools[0].routing.priority", 101, /<=100/],
    ["unknown routing mode", "tools[0].routing.mode", "always", /prefer/],
    ["zero timeout", "tools[0].timeoutMs", 0, />=1/],
    ["jitter above 1", "tools[0].retryPolicy", { jitter: 2 }, /<=1/, "tools[0].retryPolicy.jitter"],
    ["misspelled field", "tools[0].readonly", true, /unknown field/],
    ["manifestVersion 2", "manifestVersion", 2, /1/],
    ["blank scopeTemplate", "tools[0].permission.scopeTemplate", " ", /must not be empty/],
    [
      "scopeTemplate naming no argument",
      "tools[0].permission.scopeTemplate",
      "demo:search:{folder|dir}",
      /\{folder\} is not an argument of the tool; use one of query, limit, sourceId, toolId/,
    ],
    [
      "scopeTemplate without a placeholder",
      "tools[0].permission.scopeTemplate",
      "demo:search:everything",
      /same for every call; name an argument .* or omit scopeTemplate/,
    ],
    [
      "unknown filter in scopeTemplate",
      "tools[0].permission.scopeTemplate",
      "demo:search:{query|folder}",
      /unknown filter "\|folder" in \{query\|folder\}; use one of arg, size, dir, origin/,
    ],
    [
      "unknown filter in summaryTemplate",
      "tools[0].permission.summaryTemplate",
      "Search {query|upper}",
      /unknown filter "\|upper"/,
    ],
  ])("%s is reported at its path", (_name, path, value, message, reportedAt) => {
    const result = validateManifest(withValue(makeSource(), path, value));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const issue = result.issues.find((i) => i.path === (reportedAt ?? path));
    expect(issue, JSON.stringify(result.issues)).toBeDefined();
    expect(issue?.message).toMatch(message);
  });

  test("a surface policy per part is accepted, and absent parts stay absent (the gateway's allowed)", () => {
    const result = validateManifest(makeSource({ surface: { resources: "approval", logging: "denied" } }));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.manifest.surface).toEqual({ resources: "approval", logging: "denied" });
  });

  test("a scopeTemplate over the tool's arguments is accepted", () => {
    const tool = makeTool({
      readOnly: false,
      permission: {
        action: "demo:search",
        resourceTemplate: "demo:search",
        summaryTemplate: "Search {query|arg}",
        scopeTemplate: "demo:search:{query}",
      },
    });
    expect(validateManifest(makeSource({ tools: [tool] })).ok).toBe(true);
  });

  test.each(["id", "mcpToolName"] as const)("a duplicate tool %s names the second occurrence", (field) => {
    const manifest: SourceManifestInput = makeSource({
      tools: [
        makeTool({ id: "one", mcpToolName: "one" }),
        makeTool({ id: "two", mcpToolName: "two" }),
        makeTool({ id: "three", mcpToolName: "three", [field]: field === "id" ? "one" : "two" }),
      ],
    });
    const result = validateManifest(manifest, "dup.json");
    expect(result).toMatchObject({ ok: false, file: "dup.json" });
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path: `tools[2].${field}`, message: expect.stringMatching(/duplicate .*also tools\[[01]\]/) },
    ]);
  });

  test("collects every issue of a manifest, duplicates included, in one pass", () => {
    const manifest = {
      ...makeSource(),
      kind: "poetry",
      tools: [makeTool({ id: "x" }), makeTool({ id: "x", timeoutMs: -5 })],
    };
    const result = validateManifest(manifest);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path).sort()).toEqual([
      "kind",
      "tools[1].id",
      "tools[1].mcpToolName",
      "tools[1].timeoutMs",
    ]);
  });
});
