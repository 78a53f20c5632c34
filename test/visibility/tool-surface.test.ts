import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import type { ServerConfig } from "../../src/config/types.js";
import { GovernanceError } from "../../src/core/errors.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import type { SourceManifest } from "../../src/governance/manifests/manifest-schema.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import { SessionSettings } from "../../src/governance/permissions/session-settings.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { promote, promotionReducer, staleTools } from "../../src/visibility/promotion.js";
import { ToolSurface } from "../../src/visibility/tool-surface.js";
import { manifest } from "./surface-fixtures.js";

const pools: ToolServerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

const searchInput = { query: z.string(), limit: z.number().int().optional() };

/** A real McpServer offering the named tools (manifest default schema: query + limit). */
function server(names: string[], registered: Map<string, RegisteredTool> = new Map()): () => McpServer {
  return () => {
    const s = new McpServer({ name: "t", version: "1" }, { capabilities: { tools: { listChanged: true } } });
    for (const name of names) {
      registered.set(
        name,
        s.registerTool(name, { description: `live ${name}`, inputSchema: searchInput }, async () => ({
          content: [],
        })),
      );
    }
    return s;
  };
}

async function setup(options: { sessions?: SessionSettings; serverRouting?: ServerConfig[] } = {}) {
  const registered = new Map<string, RegisteredTool>();
  const registry = new SourceRegistry();
  registry.register(manifest("papers", [{ id: "search" }, { id: "gone", mcpToolName: "not_served" }]));
  registry.register(
    manifest("wiki", [{ id: "get_page", mcpToolName: "get_page" }], { enabledByDefault: false }),
  );
  const pool = createInMemoryPool({
    papers: server(["search", "unmanifested"], registered),
    wiki: server(["get_page"]),
  });
  pools.push(pool);
  const catalog = new SourceCatalog({ registry, pool });
  const surface = new ToolSurface({ catalog, ...options });
  return { catalog, surface, registered };
}

describe("ToolSurface", () => {
  test("three filters: manifest registry, live catalog availability, session enablement", async () => {
    const sessions = new SessionSettings();
    const { catalog, surface } = await setup({ sessions });
    expect(surface.tools("s1")).toEqual([]);
    expect(surface.revision()).toBe("");
    await catalog.refresh();
    // `unmanifested` is live but in no manifest of a managed server; `gone` is in the manifest but not live;
    // the wiki is off by default.
    expect(surface.tools("s1").map((t) => t.name)).toEqual(["mcp__papers__search"]);
    sessions.enableSource("s1", "wiki");
    expect(surface.tools("s1").map((t) => t.name)).toEqual(["mcp__papers__search", "mcp__wiki__get_page"]);
    expect(surface.tools("s2").map((t) => t.name)).toEqual(["mcp__papers__search"]);
    sessions.disableSource("s2", "papers");
    expect(surface.tools("s2")).toEqual([]);
    expect(surface.revision()).toBe(catalog.revision);
  });

  test("surface tools are deferred and carry the live definition hash", async () => {
    const { catalog, surface } = await setup();
    await catalog.refresh();
    const tool = surface.get("s1", "mcp__papers__search");
    expect(tool).toMatchObject({ deferred: true, qualifiedName: "papers.search", serverId: "papers" });
    expect(tool?.definitionHash).toBe(catalog.getTool("papers", "search")?.definitionHash);
    expect(surface.get("s1", "mcp__papers__gone")).toBeUndefined();
  });

  test("the list is reused while the revision holds and rebuilt when a live definition changes", async () => {
    const { catalog, surface, registered } = await setup();
    await catalog.refresh();
    const before = surface.tools("s1");
    expect(surface.tools("s1")).toBe(before);
    const promoted = promotionReducer(undefined, promote(["mcp__papers__search"], before));
    registered.get("search")?.update({ description: "live search, now with a different contract" });
    await catalog.refresh();
    const after = surface.tools("s1");
    expect(after).not.toBe(before);
    expect(after[0]?.definitionHash).not.toBe(before[0]?.definitionHash);
    expect(staleTools(promoted, after).map((s) => s.name)).toEqual(["mcp__papers__search"]);
  });

  test("config routing overrides the manifest's for that server's tools", async () => {
    const routing = { keywords: ["articles"], mode: "prefer" as const, priority: 99 };
    const config: ServerConfig = {
      id: "papers",
      transport: "stdio",
      args: [],
      env: {},
      headers: {},
      enabled: true,
      tools: { search: { routing } },
    };
    const { catalog, surface } = await setup({ serverRouting: [config] });
    await catalog.refresh();
    expect(surface.get("s1", "mcp__papers__search")?.routing).toEqual(routing);
  });
});

describe("ToolSurface.fromManifests", () => {
  test("builds every tool of every manifest offline, deferred", () => {
    const tools = ToolSurface.fromManifests([
      manifest("papers", [{ id: "search" }, { id: "lookup" }]),
      manifest("wiki", [{ id: "search" }], { enabledByDefault: false }),
    ]);
    expect(tools.map((t) => [t.name, t.deferred])).toEqual([
      ["mcp__papers__search", true],
      ["mcp__papers__lookup", true],
      ["mcp__wiki__search", true],
    ]);
  });

  test("two tools with one model-visible name fail at build time with DUPLICATE_ID", () => {
    // Only manifests built in code can get here: validated ids cannot collide.
    const base = manifest("ab", [{ id: "x" }]);
    const dotted = { ...base, id: "a.b" } as SourceManifest;
    const spaced = { ...base, id: "a b" } as SourceManifest;
    const build = () => ToolSurface.fromManifests([dotted, spaced]);
    expect(build).toThrow(GovernanceError);
    expect(build).toThrow("Tools a.b/x and a b/x both map to the model-visible name 'mcp__a_b__x'");
    expect(() => ToolSurface.fromManifests([dotted, base])).not.toThrow();
  });
});
