import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { GovernanceError } from "../../../src/core/errors.js";
import { toolDefinitionHash } from "../../../src/governance/catalog/match-tools.js";
import { SourceCatalog } from "../../../src/governance/catalog/source-catalog.js";
import type { CatalogSnapshot } from "../../../src/governance/catalog/source-catalog-types.js";
import { SourceRegistry } from "../../../src/governance/manifests/source-registry.js";
import type { ToolServerPool } from "../../../src/mcp/types.js";
import { createInMemoryPool, type InMemoryServerSource } from "../../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { makeSource, makeTool, type ToolInput } from "../manifests/manifest-factory.js";

const searchSchema = {
  type: "object" as const,
  properties: { query: { type: "string" }, limit: { type: "integer" } },
  required: ["query"],
};

interface RawServerSpec {
  tools: Tool[];
  /** Tools per `tools/list` page (all on one page when omitted). */
  pageSize?: number;
  /** Makes `tools/list` fail with this message. */
  listError?: string;
  /** Makes `tools/list` never answer. */
  hang?: boolean;
  /** Counts `tools/list` requests. */
  calls?: { list: number };
}

/** A real `McpServer` whose `tools/list` answers exactly the given definitions, paged by `nextCursor`. */
function rawServer(spec: RawServerSpec): McpServer {
  const server = new McpServer(
    { name: "raw", version: "1" },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    if (spec.calls) spec.calls.list += 1;
    if (spec.hang) return new Promise<never>(() => {});
    if (spec.listError) throw new Error(spec.listError);
    const size = spec.pageSize ?? spec.tools.length;
    const start = Number(request.params?.cursor ?? 0);
    const next = start + size;
    return {
      tools: spec.tools.slice(start, next),
      ...(next < spec.tools.length ? { nextCursor: String(next) } : {}),
    };
  });
  return server;
}

const live = (
  name: string,
  inputSchema: Tool["inputSchema"] = searchSchema,
  extra: Partial<Tool> = {},
): Tool => ({
  name,
  description: `live ${name}`,
  inputSchema,
  ...extra,
});

const pools: ToolServerPool[] = [];
const catalogs: SourceCatalog[] = [];
afterEach(async () => {
  for (const catalog of catalogs.splice(0)) catalog.stop();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function setup(
  servers: Record<string, InMemoryServerSource>,
  sources: ReturnType<typeof makeSource>[],
  options: {
    disabled?: string[];
    enabledSourceIds?: string[];
    clock?: ManualClock;
    wrap?: (p: ToolServerPool) => ToolServerPool;
  } = {},
) {
  const registry = new SourceRegistry();
  for (const source of sources) registry.register(source);
  const inner = createInMemoryPool(servers, { disabled: options.disabled ?? [] });
  pools.push(inner);
  const pool = options.wrap ? options.wrap(inner) : inner;
  const catalog = new SourceCatalog({
    registry,
    pool,
    ...(options.enabledSourceIds ? { enabledSourceIds: options.enabledSourceIds } : {}),
    ...(options.clock ? { clock: options.clock, listToolsTimeoutMs: 1000 } : {}),
  });
  catalogs.push(catalog);
  return { registry, pool, catalog };
}

function nextChange(catalog: SourceCatalog): Promise<CatalogSnapshot> {
  return new Promise((resolve) => {
    const off = catalog.on("change", (snapshot) => {
      off();
      resolve(snapshot);
    });
  });
}

function thrown(fn: () => unknown): GovernanceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GovernanceError);
    return error as GovernanceError;
  }
  throw new Error("expected a GovernanceError");
}

describe("SourceCatalog", () => {
  test("ready: manifest tools match a real McpServer's zod-declared tools", async () => {
    const server = () => {
      const s = new McpServer({ name: "papers", version: "1" });
      s.registerTool(
        "paper_search",
        { description: "Search", inputSchema: { query: z.string(), limit: z.number().int().optional() } },
        async () => ({ content: [] }),
      );
      return s;
    };
    const source = makeSource({
      id: "papers",
      tools: [makeTool({ id: "search", mcpToolName: "paper_search" })],
    });
    const { catalog } = setup({ papers: server }, [source]);
    const snapshot = await catalog.refresh();
    expect(snapshot.sources).toEqual([
      expect.objectContaining({
        id: "papers",
        status: "ready",
        availableTools: ["search"],
        missingTools: [],
      }),
    ]);
    expect(snapshot.sources[0]?.reason).toBeUndefined();
    const tool = catalog.requireTool("papers", "search");
    expect(tool.liveTool.name).toBe("paper_search");
    expect(tool.serverId).toBe("papers");
    expect(tool.definitionHash).toBe(toolDefinitionHash(tool.liveTool));
    expect(catalog.revision).toMatch(/^[0-9a-f]{64}$/);
  });

  test.each<[string, Tool[], ToolInput["inputSchema"], RegExp | undefined]>([
    ["compatible", [live("find")], searchSchema, undefined],
    ["missing tool", [live("other")], searchSchema, /server 'lib' has no tool 'find'/],
    [
      "incompatible property type",
      [
        live("find", {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "string" } },
        }),
      ],
      searchSchema,
      /property "limit": type "integer" in the manifest, but the server accepts "string"/,
    ],
    [
      "extra required remote property",
      [
        live("find", {
          ...searchSchema,
          properties: { ...searchSchema.properties, apiKey: { type: "string" } },
          required: ["query", "apiKey"],
        }),
      ],
      searchSchema,
      /property "apiKey" is required by the server/,
    ],
    [
      "additionalProperties false remotely",
      [
        live("find", {
          type: "object",
          properties: { query: { type: "string" } },
          additionalProperties: false,
        }),
      ],
      searchSchema,
      /property "limit" .*allows no additional properties/,
    ],
  ])("catalog rule: %s", async (_name, liveTools, localSchema, reason) => {
    const manifest = makeSource({
      id: "lib",
      tools: [makeTool({ id: "find", inputSchema: localSchema }), makeTool({ id: "ok", mcpToolName: "ok" })],
    });
    const { catalog } = setup({ lib: rawServer({ tools: [...liveTools, live("ok")] }) }, [manifest]);
    const source = (await catalog.refresh()).sources[0];
    if (reason === undefined) {
      expect(source).toMatchObject({ status: "ready", availableTools: ["find", "ok"], missingTools: [] });
      expect(catalog.getTool("lib", "find")).toBeDefined();
      return;
    }
    expect(source).toMatchObject({ status: "degraded", availableTools: ["ok"] });
    expect(source?.reason).toMatch(/1 of 2 tools unavailable: find/);
    expect(source?.missingTools).toEqual([
      { toolId: "find", mcpToolName: "find", reason: expect.stringMatching(reason) },
    ]);
    // A missing tool is never offered.
    expect(catalog.tools().map((t) => t.toolId)).toEqual(["ok"]);
    expect(catalog.getTool("lib", "find")).toBeUndefined();
    const error = thrown(() => catalog.requireTool("lib", "find"));
    expect(error.code).toBe("TOOL_UNAVAILABLE");
    expect(error.message).toMatch(reason);
  });

  test("a source none of whose tools is usable is unavailable, each tool listed with its reason", async () => {
    const manifest = makeSource({ id: "lib", tools: [makeTool({ id: "a" }), makeTool({ id: "b" })] });
    const { catalog } = setup({ lib: rawServer({ tools: [live("c")] }) }, [manifest]);
    const source = (await catalog.refresh()).sources[0];
    expect(source).toMatchObject({ status: "unavailable", reason: "none of its 2 tools is available" });
    expect(source?.missingTools.map((m) => m.toolId)).toEqual(["a", "b"]);
  });

  test.each<[string, Record<string, InMemoryServerSource>, RegExp]>([
    [
      "the server fails to start",
      {
        lib: () => {
          throw new Error("spawn python3 ENOENT");
        },
      },
      /tools\/list on server 'lib' failed: .*spawn python3 ENOENT/,
    ],
    ["tools/list throws", { lib: rawServer({ tools: [], listError: "database locked" }) }, /database locked/],
    ["no such server is configured", {}, /no MCP server 'lib' is configured/],
  ])("unavailable when %s, and its tools are refused with the reason", async (_name, servers, reason) => {
    const { catalog } = setup(servers, [makeSource({ id: "lib", tools: [makeTool({ id: "find" })] })]);
    const source = (await catalog.refresh()).sources[0];
    expect(source?.status).toBe("unavailable");
    expect(source?.reason).toMatch(reason);
    expect(source?.missingTools).toEqual([{ toolId: "find", mcpToolName: "find", reason: source?.reason }]);
    const error = thrown(() => catalog.requireTool("lib", "find"));
    expect(error).toMatchObject({ code: "TOOL_UNAVAILABLE", retryable: true });
    expect(error.message).toMatch(reason);
  });

  test("a server that failed is retried by the next refresh and becomes ready", async () => {
    let attempts = 0;
    const flaky = () => {
      attempts += 1;
      if (attempts === 1) throw new Error("connection refused");
      return rawServer({ tools: [live("search")] });
    };
    const { catalog, pool } = setup({ lib: flaky }, [makeSource({ id: "lib" })]);
    expect((await catalog.refresh()).sources[0]?.status).toBe("unavailable");
    expect(pool.state("lib")).toMatchObject({ status: "failed", reason: "connection refused" });
    expect((await catalog.refresh()).sources[0]?.status).toBe("ready");
    expect(pool.state("lib")).toMatchObject({ status: "connected", starts: 2 });
  });

  test("an unavailable server's reason includes its stderr tail; other sources are unaffected", async () => {
    const withStderr = (inner: ToolServerPool): ToolServerPool => ({
      ...inner,
      state: (id) => ({
        ...inner.state(id),
        stderrTail: ["Traceback (most recent call last):", "ImportError: no httpx"],
      }),
    });
    const broken = () => {
      throw new Error("server exited with code 1");
    };
    const { catalog } = setup(
      { lib: broken, ok: rawServer({ tools: [live("search")] }) },
      [makeSource({ id: "lib" }), makeSource({ id: "ok" })],
      { wrap: withStderr },
    );
    const [lib, ok] = (await catalog.refresh()).sources;
    expect(lib?.reason).toMatch(
      /server exited with code 1 \(stderr: Traceback .* \| ImportError: no httpx\)/,
    );
    expect(ok?.status).toBe("ready");
  });

  test("disabled: a server disabled in config is never started; a source not enabled neither", async () => {
    let starts = 0;
    const counted = () => {
      starts += 1;
      return rawServer({ tools: [live("search")] });
    };
    const { catalog } = setup(
      { off: counted, notEnabled: counted, on: counted },
      [
        makeSource({ id: "off" }),
        makeSource({ id: "quiet", transport: { mcpServerId: "notEnabled" } }),
        makeSource({ id: "on" }),
      ],
      { disabled: ["off"], enabledSourceIds: ["off", "on"] },
    );
    const snapshot = await catalog.refresh();
    expect(snapshot.sources.map((s) => [s.id, s.status])).toEqual([
      ["off", "disabled"],
      ["quiet", "disabled"],
      ["on", "ready"],
    ]);
    expect(snapshot.sources[0]?.reason).toMatch(/disabled in the configuration/);
    expect(snapshot.sources[1]?.reason).toBe("source 'quiet' is not enabled");
    expect(starts).toBe(1);
    expect(thrown(() => catalog.requireTool("off", "search")).code).toBe("SOURCE_DISABLED");
  });

  test("a server without a manifest gets a derived source; readOnly only from the annotation", async () => {
    const tools = [
      live("read", searchSchema, { annotations: { readOnlyHint: true } }),
      live("write", searchSchema, { annotations: { readOnlyHint: false, destructiveHint: true } }),
      live("unknown", searchSchema),
    ];
    const { catalog } = setup({ My_Lab: rawServer({ tools }), lib: rawServer({ tools: [live("search")] }) }, [
      makeSource({ id: "lib" }),
    ]);
    const snapshot = await catalog.refresh();
    expect(snapshot.sources.map((s) => [s.id, s.derived, s.status])).toEqual([
      ["lib", false, "ready"],
      ["my-lab", true, "ready"],
    ]);
    const readOnly = (toolId: string) => catalog.requireTool("my-lab", toolId).manifest.readOnly;
    expect([readOnly("read"), readOnly("write"), readOnly("unknown")]).toEqual([true, false, false]);
    expect(catalog.source("my-lab")?.manifest.governance.networkHosts).toEqual([]);
    expect(catalog.requireTool("my-lab", "write").manifest.permission.action).toBe("My_Lab:write");
  });

  test("a derived id that clashes with a registered source is hidden with a warning", async () => {
    const { catalog } = setup(
      { shared: rawServer({ tools: [live("search")] }), lib: rawServer({ tools: [live("x")] }) },
      [makeSource({ id: "lib", transport: { mcpServerId: "shared" } })],
    );
    const snapshot = await catalog.refresh();
    expect(snapshot.sources.map((s) => s.id)).toEqual(["lib"]);
    expect(snapshot.warnings).toEqual([expect.stringContaining("Server 'lib' has no manifest")]);
  });

  test("follows every page of tools/list", async () => {
    const tools = Array.from({ length: 7 }, (_, i) => live(`t${i}`));
    const manifest = makeSource({ id: "big", tools: [makeTool({ id: "t0" }), makeTool({ id: "t6" })] });
    const calls = { list: 0 };
    const { catalog } = setup({ big: rawServer({ tools, pageSize: 3, calls }) }, [manifest]);
    expect((await catalog.refresh()).sources[0]).toMatchObject({
      status: "ready",
      availableTools: ["t0", "t6"],
    });
    expect(calls.list).toBe(3);
  });

  test("list_changed refreshes after start(); a changed definition changes hash and revision; stop() unsubscribes", async () => {
    const server = new McpServer({ name: "papers", version: "1" });
    const registered = server.registerTool(
      "search",
      { description: "Search v1", inputSchema: { query: z.string(), limit: z.number().int().optional() } },
      async () => ({ content: [] }),
    );
    const { catalog } = setup({ papers: server }, [makeSource({ id: "papers" })]);
    const changes: string[] = [];
    catalog.on("change", (s) => changes.push(s.revision));
    const first = await catalog.start();
    const firstHash = catalog.requireTool("papers", "search").definitionHash;

    const same = await catalog.refresh();
    expect(same.revision).toBe(first.revision);
    expect(changes).toEqual([first.revision]);

    const changed = nextChange(catalog);
    registered.update({ description: "Search v2" }); // the SDK sends notifications/tools/list_changed
    const second = await changed;
    expect(second.revision).not.toBe(first.revision);
    expect(catalog.requireTool("papers", "search").definitionHash).not.toBe(firstHash);
    expect(catalog.requireTool("papers", "search").liveTool.description).toBe("Search v2");

    catalog.stop();
    registered.update({ description: "Search v3" });
    await catalog.refresh().then(() => undefined); // the explicit refresh still works after stop
    expect(changes).toHaveLength(3);
    const count = changes.length;
    registered.update({ description: "Search v4" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(changes).toHaveLength(count);
    expect(catalog.requireTool("papers", "search").liveTool.description).toBe("Search v3");
  });

  test("concurrent refreshes are coalesced into one follow-up run", async () => {
    const calls = { list: 0 };
    const { catalog } = setup({ lib: rawServer({ tools: [live("search")], calls }) }, [
      makeSource({ id: "lib" }),
    ]);
    const first = catalog.refresh();
    const second = catalog.refresh();
    const third = catalog.refresh();
    expect(third).toBe(second);
    await Promise.all([first, second, third]);
    expect(calls.list).toBe(2);
  });

  test("a server that never answers tools/list is unavailable after the timeout", async () => {
    const clock = new ManualClock(0);
    const { catalog } = setup(
      { slow: rawServer({ tools: [], hang: true }), fast: rawServer({ tools: [live("search")] }) },
      [makeSource({ id: "slow" }), makeSource({ id: "fast" })],
      { clock },
    );
    const refreshed = catalog.refresh();
    await clock.advance(999);
    expect(catalog.snapshot()).toBeUndefined();
    await clock.advance(1);
    const snapshot = await refreshed;
    expect(snapshot.sources.map((s) => [s.id, s.status])).toEqual([
      ["slow", "unavailable"],
      ["fast", "ready"],
    ]);
    expect(snapshot.sources[0]?.reason).toMatch(/no answer within 1000 ms/);
  });

  test("requireTool before any refresh and for unknown ids says why", async () => {
    const { catalog } = setup({ lib: rawServer({ tools: [live("search")] }) }, [makeSource({ id: "lib" })]);
    expect(thrown(() => catalog.requireTool("lib", "search")).message).toMatch(/never refreshed/);
    await catalog.refresh();
    expect(thrown(() => catalog.requireTool("nope", "search"))).toMatchObject({ code: "TOOL_UNAVAILABLE" });
    const unknownTool = thrown(() => catalog.requireTool("lib", "fetch"));
    expect(unknownTool.code).toBe("TOOL_UNAVAILABLE");
    expect(unknownTool.message).toMatch(/no tool 'fetch' \(tools: search\)/);
  });
});

describe("SourceCatalog: ids named after Object.prototype members", () => {
  test("derived servers 'toString' and 'valueOf' without descriptions get the default description", async () => {
    const pool = createInMemoryPool({
      toString: rawServer({ tools: [live("search")] }),
      valueOf: rawServer({ tools: [live("search")] }),
      lab: rawServer({ tools: [live("search")] }),
    });
    pools.push(pool);
    const catalog = new SourceCatalog({
      registry: new SourceRegistry(),
      pool,
      serverDescriptions: { lab: "Our lab" },
    });
    catalogs.push(catalog);
    const snapshot = await catalog.refresh();
    expect(snapshot.sources.map((s) => [s.id, s.status, s.manifest.description])).toEqual([
      ["tostring", "ready", "MCP server 'toString' (no manifest; derived from its tools)."],
      ["valueof", "ready", "MCP server 'valueOf' (no manifest; derived from its tools)."],
      ["lab", "ready", "Our lab"],
    ]);
  });

  test("tool ids 'constructor' and 'tostring' resolve to the tools; an absent 'valueof' is TOOL_UNAVAILABLE", async () => {
    const tools = [live("constructor"), live("toString")];
    const source = makeSource({
      id: "lib",
      tools: [
        makeTool({ id: "constructor", mcpToolName: "constructor" }),
        makeTool({ id: "tostring", mcpToolName: "toString" }),
      ],
    });
    const { catalog } = setup({ lib: rawServer({ tools }) }, [source]);
    await catalog.refresh();
    expect(catalog.requireTool("lib", "constructor").manifest.mcpToolName).toBe("constructor");
    expect(catalog.requireTool("lib", "tostring").manifest.mcpToolName).toBe("toString");
    expect(catalog.getTool("lib", "valueof")).toBeUndefined();
    expect(thrown(() => catalog.requireTool("lib", "valueof")).code).toBe("TOOL_UNAVAILABLE");
    expect(thrown(() => catalog.requireTool("constructor", "tostring")).code).toBe("TOOL_UNAVAILABLE");
  });
});
