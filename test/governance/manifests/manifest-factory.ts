/** Builders of valid test manifests; each test changes only what it is about. */
import type { SourceManifestInput } from "../../../src/governance/manifests/manifest-schema.js";

/** A tool manifest as written in a file. */
export type ToolInput = SourceManifestInput["tools"][number];

/**
 * A valid tool manifest.
 * @param overrides fields to replace
 */
export function makeTool(overrides: Partial<ToolInput> = {}): ToolInput {
  const id = overrides.id ?? "search";
  return {
    id,
    description: `The ${id} tool.`,
    kind: "search",
    mcpToolName: overrides.mcpToolName ?? id,
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer" } },
      required: ["query"],
    },
    readOnly: true,
    permission: { action: `demo:${id}`, resourceTemplate: `demo:${id}`, summaryTemplate: `Run ${id}` },
    timeoutMs: 10_000,
    routing: { keywords: ["demo"], mode: "prefer", priority: 50 },
    promptFragment: "",
    ...overrides,
  };
}

/**
 * A valid source manifest served by `serverId` (default: the source id).
 * @param overrides fields to replace
 */
export function makeSource(overrides: Partial<SourceManifestInput> = {}): SourceManifestInput {
  const id = overrides.id ?? "demo";
  return {
    id,
    displayName: `Demo ${id}`,
    description: "A source for tests.",
    publisher: "Sciencegate tests",
    version: "1.0.0",
    kind: "literature",
    enabledByDefault: true,
    transport: { mcpServerId: id },
    cache: { enabled: true, ttlSeconds: 60 },
    prompt: { summary: "Test data.", citationPolicy: "Cite the record URL.", caveats: [] },
    governance: {
      attribution: "Test data",
      license: "CC0-1.0",
      termsUrl: "https://example.org/terms",
      dataClassification: "public",
      networkHosts: ["example.org"],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: id,
    },
    tools: [makeTool()],
    ...overrides,
  };
}
