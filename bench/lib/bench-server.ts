/** The in-process MCP server and manifest that the broker benchmark calls. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { SourceManifestInput } from "../../src/governance/manifests/manifest-schema.js";
import { BENCH_HOST, benchResult } from "./bench-records.js";

/** Source id, MCP server id and rate-limit group of the benchmark source. */
export const BENCH_SOURCE_ID = "bench";

/** A tool whose results the broker never caches (so every call reaches the server). */
export const UNCACHED_TOOL = "search";

/** The same search with caching on (for cache-hit cost). */
export const CACHED_TOOL = "search_cached";

/**
 * An MCP server with two identical search tools that answer `benchResult` at once.
 * @returns a fresh `McpServer` (one per connection)
 */
export function createBenchServer(): McpServer {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  for (const name of [UNCACHED_TOOL, CACHED_TOOL]) {
    server.registerTool(
      name,
      {
        description: "Searches the bench corpus.",
        inputSchema: { query: z.string(), limit: z.number().int().optional() },
      },
      async ({ query }) => {
        const result = benchResult(name, query);
        return {
          content: [{ type: "text" as const, text: JSON.stringify(result) }],
          structuredContent: result as unknown as Record<string, unknown>,
        };
      },
    );
  }
  return server;
}

function tool(id: string, cacheEnabled: boolean): SourceManifestInput["tools"][number] {
  return {
    id,
    description: "Searches the bench corpus.",
    kind: "search",
    mcpToolName: id,
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer" } },
      required: ["query"],
    },
    readOnly: true,
    permission: { action: `bench:${id}`, resourceTemplate: `bench:${id}`, summaryTemplate: `Search ${id}` },
    cachePolicy: { enabled: cacheEnabled, ttlSeconds: 600 },
    timeoutMs: 10_000,
    routing: { keywords: ["bench"], mode: "off", priority: 0 },
    promptFragment: "",
  };
}

/**
 * The manifest of the benchmark source: public, read-only, one allowed host, one rate-limit group.
 * @param maxConcurrentRequests the group's concurrency cap
 * @returns a manifest as written in a file
 */
export function benchManifest(maxConcurrentRequests: number): SourceManifestInput {
  return {
    id: BENCH_SOURCE_ID,
    displayName: "Bench",
    description: "An in-process source for benchmarks.",
    publisher: "Sciencegate bench",
    version: "1.0.0",
    kind: "literature",
    enabledByDefault: true,
    transport: { mcpServerId: BENCH_SOURCE_ID },
    cache: { enabled: true, ttlSeconds: 600 },
    prompt: { summary: "Bench data.", citationPolicy: "Cite the record URL.", caveats: [] },
    governance: {
      attribution: "Bench data",
      license: "CC0-1.0",
      termsUrl: `https://${BENCH_HOST}/terms`,
      dataClassification: "public",
      networkHosts: [BENCH_HOST],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: BENCH_SOURCE_ID,
      maxConcurrentRequests,
    },
    tools: [tool(UNCACHED_TOOL, false), tool(CACHED_TOOL, true)],
  };
}
