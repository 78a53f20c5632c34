import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { derivedSourceId, deriveManifest } from "../../../src/governance/manifests/derived-manifest.js";
import { sourceManifestSchema } from "../../../src/governance/manifests/manifest-schema.js";

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `Tool ${name}`,
  inputSchema: { type: "object", properties: { x: { type: "string" } } },
  ...extra,
});

describe("deriveManifest", () => {
  test.each<[string, Tool["annotations"], boolean]>([
    ["readOnlyHint true", { readOnlyHint: true }, true],
    ["readOnlyHint false", { readOnlyHint: false }, false],
    ["no readOnlyHint", { destructiveHint: false }, false],
    ["no annotations", undefined, false],
    ["a truthy non-boolean hint", { readOnlyHint: "true" as unknown as boolean }, false],
  ])("%s gives the expected readOnly (fail closed)", (_name, annotations, readOnly) => {
    const manifest = deriveManifest("lab", [tool("run", annotations ? { annotations } : {})]);
    expect(manifest.tools[0]?.readOnly).toBe(readOnly);
    // A call that may have side effects is never retried.
    expect(manifest.tools[0]?.retryPolicy).toEqual(readOnly ? {} : { maxAttempts: 1 });
  });

  test("governs an unknown server conservatively", () => {
    const live = tool("query", { annotations: { readOnlyHint: true } });
    const manifest = deriveManifest("my-lab", [live], "Our lab's assay database");
    expect(manifest).toMatchObject({
      id: "my-lab",
      kind: "other",
      enabledByDefault: true,
      description: "Our lab's assay database",
      transport: { mcpServerId: "my-lab" },
      cache: { enabled: false },
      governance: { dataClassification: "public", networkHosts: [], rateLimitGroup: "my-lab" },
    });
    expect(manifest.tools[0]).toMatchObject({
      id: "query",
      mcpToolName: "query",
      description: "Tool query",
      inputSchema: live.inputSchema,
      permission: { action: "my-lab:query", resourceTemplate: "my-lab:query" },
      routing: { mode: "off" },
    });
    expect(manifest.tools[0]?.permission.summaryTemplate).toContain("query");
  });

  test("normalizes ids but keeps the exact MCP names; colliding tool ids get a hash suffix", () => {
    const manifest = deriveManifest("My_Server", [tool("getPage"), tool("get.page"), tool("GETPAGE")]);
    expect(manifest.id).toBe("my-server");
    expect(derivedSourceId("My_Server")).toBe("my-server");
    expect(manifest.tools.map((t) => t.mcpToolName)).toEqual(["getPage", "get.page", "GETPAGE"]);
    const ids = manifest.tools.map((t) => t.id);
    expect(ids[0]).toBe("getpage");
    expect(ids[1]).toBe("get_page");
    expect(ids[2]).toMatch(/^getpage_[0-9a-f]{6}$/);
    for (const id of ids) expect(id).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
  });

  test("a tool without a description falls back to its title or name", () => {
    const manifest = deriveManifest("s", [
      { name: "a", inputSchema: { type: "object" }, annotations: { title: "Annotated A" } },
      { name: "b", inputSchema: { type: "object" } },
    ]);
    expect(manifest.tools.map((t) => t.description)).toEqual(["Annotated A", "b"]);
  });
});

describe("deriveManifest permission blocks", () => {
  const fsTool = (
    name: string,
    properties: Record<string, object>,
    annotations?: Tool["annotations"],
  ): Tool => ({
    name,
    inputSchema: { type: "object", properties },
    ...(annotations ? { annotations } : {}),
  });

  test.each<[string, Tool, string, string | undefined]>([
    [
      "a write tool with a path",
      fsTool("write_file", { path: { type: "string" }, content: { type: "string" } }),
      "write_file on fs: {path|arg}, {content|size}",
      "fs:write_file:dir:{path|dir}",
    ],
    [
      "a move with two paths",
      fsTool("move_file", { source: { type: "string" }, destination: { type: "string" } }),
      "move_file on fs: {source|arg}, {destination|arg}",
      "fs:move_file:dir:{source|dir}:dir:{destination|dir}",
    ],
    [
      "a URL by format",
      fsTool("fetch_page", { target: { type: "string", format: "uri" } }),
      "fetch_page on fs: {target|arg}",
      "fs:fetch_page:origin:{target|origin}",
    ],
    [
      "a read-only tool keeps the tool-wide scope",
      fsTool("read_file", { path: { type: "string" } }, { readOnlyHint: true }),
      "read_file on fs: {path|arg}",
      undefined,
    ],
    [
      "a write tool without a path keeps the tool-wide scope",
      fsTool("create_issue", {
        title: { type: "string" },
        body: { type: "string" },
        repo_id: { type: "string" },
      }),
      "create_issue on fs: {body|size}, {repo_id|arg}",
      undefined,
    ],
  ])("%s", (_name, live, summaryTemplate, scopeTemplate) => {
    const manifest = deriveManifest("fs", [live]);
    expect(manifest.tools[0]?.permission.summaryTemplate).toBe(summaryTemplate);
    expect(manifest.tools[0]?.permission.scopeTemplate).toBe(scopeTemplate);
    // A derived manifest passes the same checks as a written one.
    const checked = sourceManifestSchema.safeParse({
      ...manifest,
      governance: { ...manifest.governance, termsUrl: "https://x.org" },
    });
    expect(checked.error?.issues).toBeUndefined();
  });
});

describe("deriveManifest without a description", () => {
  test.each(["lab", "toString", "constructor"])("server %j gets the default description", (serverId) => {
    const manifest = deriveManifest(serverId, [tool("run")]);
    expect(manifest.description).toBe(`MCP server '${serverId}' (no manifest; derived from its tools).`);
    expect(manifest.prompt.summary).toBe(manifest.description);
    expect(manifest.tools.map((t) => t.mcpToolName)).toEqual(["run"]);
  });
});
