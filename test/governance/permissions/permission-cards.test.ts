import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { LedgerWriter } from "../../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { deriveManifest } from "../../../src/governance/manifests/derived-manifest.js";
import { builtinManifestDir, loadManifestFile } from "../../../src/governance/manifests/manifest-loader.js";
import type { ToolManifest } from "../../../src/governance/manifests/manifest-schema.js";
import type { AuthorizationRequest } from "../../../src/governance/permissions/authorization.js";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import { PermissionService } from "../../../src/governance/permissions/permission-service.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { makeRequest } from "./permission-fixtures.js";

/** Tool definitions as `@modelcontextprotocol/server-filesystem` and other unknown servers list them. */
const LIVE_TOOLS: Tool[] = [
  {
    name: "write_file",
    inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } },
  },
  {
    name: "edit_file",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, edits: { type: "array" }, dryRun: { type: "boolean" } },
    },
  },
  {
    name: "move_file",
    inputSchema: {
      type: "object",
      properties: { source: { type: "string" }, destination: { type: "string" } },
    },
  },
  {
    name: "post",
    inputSchema: {
      type: "object",
      properties: { endpoint: { type: "string", format: "uri" }, body: { type: "string" } },
    },
  },
  {
    name: "lookup",
    inputSchema: {
      type: "object",
      properties: { q: { type: "string" }, record_id: { type: "string" }, datasetId: { type: "string" } },
    },
  },
  { name: "restart", inputSchema: { type: "object", properties: { force: { type: "boolean" } } } },
  {
    name: "read_text_file",
    annotations: { readOnlyHint: true },
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  },
];
const derived = deriveManifest("filesystem", LIVE_TOOLS);
const derivedTool = (name: string): ToolManifest => {
  const tool = derived.tools.find((t) => t.mcpToolName === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};
const pubmed = await loadManifestFile(join(builtinManifestDir(), "pubmed.json"));

let nextCall = 0;
/** A call of a derived filesystem tool (or a real manifest tool) as the broker describes it. */
function call(tool: ToolManifest, input: Record<string, unknown>, sessionId = "s1"): AuthorizationRequest {
  nextCall += 1;
  const source = derived.tools.includes(tool) ? derived : pubmed;
  return {
    ...makeRequest({ sessionId, toolCallId: `c${nextCall}` }),
    sourceId: source.id,
    toolId: tool.id,
    tool,
    source,
    input,
  };
}

function setup() {
  const ledger = new MemoryLedger();
  const service = new PermissionService({
    ledgerWriter: new LedgerWriter(ledger),
    grants: new MemoryGrantStore(),
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
  });
  return { ledger, service };
}

const long = "x".repeat(1_234);

describe("card summaries name what will happen, with the decisive arguments", () => {
  test.each<[string, ToolManifest, Record<string, unknown>, string]>([
    [
      "write_file (no manifest)",
      derivedTool("write_file"),
      { path: "/tmp/x/a.txt", content: "content of a.txt" },
      'write_file on filesystem: path "/tmp/x/a.txt", content 16 characters',
    ],
    [
      "write_file with long content and a control character in the path",
      derivedTool("write_file"),
      { path: "/tmp/x/\u202eb.txt", content: long },
      'write_file on filesystem: path "/tmp/x/ b.txt", content 1,234 characters',
    ],
    [
      "edit_file (edits shown as a count, dryRun not decisive)",
      derivedTool("edit_file"),
      { path: "/tmp/x/a.txt", edits: [{ oldText: "a", newText: "b" }], dryRun: false },
      'edit_file on filesystem: path "/tmp/x/a.txt"',
    ],
    [
      "move_file (both paths)",
      derivedTool("move_file"),
      { source: "/tmp/x/a.txt", destination: "/tmp/y/a.txt" },
      'move_file on filesystem: source "/tmp/x/a.txt", destination "/tmp/y/a.txt"',
    ],
    [
      "a URL and a body",
      derivedTool("post"),
      { endpoint: "https://lab.example.org/api", body: "{}" },
      'post on filesystem: endpoint "https://lab.example.org/api", body 2 characters',
    ],
    [
      "a query and identifiers; an absent one leaves no gap",
      derivedTool("lookup"),
      { q: "brca1", datasetId: "D-7" },
      'lookup on filesystem: q "brca1", datasetId "D-7"',
    ],
    [
      "a query longer than a placeholder shows its size",
      derivedTool("lookup"),
      { q: long, record_id: "r1" },
      'lookup on filesystem: q 1,234 characters, record_id "r1"',
    ],
    ["no decisive argument", derivedTool("restart"), { force: true }, "restart on filesystem"],
    [
      "a manifest tool keeps its template",
      pubmed.tools.find((t) => t.id === "search") as ToolManifest,
      { query: "brca1" },
      'Search PubMed for "brca1"',
    ],
  ])("%s", async (_name, tool, input, summary) => {
    const card = setup().service.cardFor(call(tool, input));
    expect(card.summary).toBe(summary);
    expect(card.summary).not.toMatch(/manifest/i);
  });

  test("three writes to three files get three distinct summaries", () => {
    const { service } = setup();
    const summaries = ["a", "b", "c"].map(
      (f) =>
        service.cardFor(call(derivedTool("write_file"), { path: `/tmp/x/${f}.txt`, content: "hi" })).summary,
    );
    expect(new Set(summaries).size).toBe(3);
  });
});

describe("what allow_matching covers", () => {
  const write = (path: unknown) => call(derivedTool("write_file"), { path, content: "hi" });

  test("the card of a write states its one-directory scope", () => {
    expect(setup().service.cardFor(write("/tmp/x/a.txt")).matchingScope).toEqual({
      resource: "filesystem:write_file:dir:/tmp/x",
      description:
        "every filesystem:write_file call with path in /tmp/x (not in its subfolders), for the rest of this session",
    });
  });

  test("a grant on /tmp/x covers another file in /tmp/x, and nothing elsewhere", async () => {
    const { service, ledger } = setup();
    const { grant } = await service.decide(write("/tmp/x/a.txt"), { decision: "allow_matching" });
    expect(grant?.resource).toBe("filesystem:write_file:dir:/tmp/x");
    const allowed = async (path: unknown) => (await service.authorize(write(path))).allowed;
    expect(await allowed("/tmp/x/b.txt")).toBe(true);
    expect(await allowed("/tmp/x/./c.txt")).toBe(true);
    expect(await allowed("/tmp/y/c.txt")).toBe(false);
    expect(await allowed("/tmp/xy/c.txt")).toBe(false);
    expect(await allowed("/tmp/x/sub/d.txt")).toBe(false);
    expect(await allowed("/tmp/x/../y/e.txt")).toBe(false);
    expect(await allowed("x/b.txt")).toBe(false);
    const rows = await ledger.listAuthorizations();
    expect(rows.map((r) => [r.decisionSource, r.resource])).toEqual([
      ["user_grant", "filesystem:write_file:dir:/tmp/x"],
      ["existing_grant", "filesystem:write_file:dir:/tmp/x"],
      ["existing_grant", "filesystem:write_file:dir:/tmp/x"],
    ]);
  });

  test("a ':' in a directory cannot forge another scope", async () => {
    const { service } = setup();
    const move = (source: string, destination: string) =>
      call(derivedTool("move_file"), { source, destination });
    await service.decide(move("/a:dir:/b/f", "/c/f"), { decision: "allow_matching" });
    expect((await service.authorize(move("/a:dir:/b/g", "/c/g"))).allowed).toBe(true);
    expect((await service.authorize(move("/a/f", "/b:dir:/c/f"))).allowed).toBe(false);
  });

  test.each<[string, unknown, string]>([
    ["a relative path", "notes/a.txt", "filesystem:write_file"],
    ["no path", undefined, "filesystem:write_file"],
  ])("%s falls back to the whole tool, and the card says so", (_name, path, resource) => {
    const input = path === undefined ? { content: "hi" } : { path, content: "hi" };
    expect(setup().service.cardFor(call(derivedTool("write_file"), input)).matchingScope).toEqual({
      resource,
      description: "every filesystem:write_file call, whatever its arguments, for the rest of this session",
    });
  });

  test("a grant on the whole tool (from a call without a usable path) covers every directory, as its card said", async () => {
    const { service } = setup();
    const { grant } = await service.decide(write("notes/a.txt"), { decision: "allow_matching" });
    expect(grant?.resource).toBe("filesystem:write_file");
    expect((await service.authorize(write("/tmp/y/c.txt"))).allowed).toBe(true);
  });

  test("a URL tool is scoped to the origin", () => {
    const card = setup().service.cardFor(
      call(derivedTool("post"), { endpoint: "https://lab.example.org/api/v1?x=1", body: "{}" }),
    );
    expect(card.matchingScope).toEqual({
      resource: "filesystem:post:origin:https%3A//lab.example.org",
      description:
        "every filesystem:post call with endpoint on https://lab.example.org, for the rest of this session",
    });
  });

  test("a read-only tool and a manifest tool keep the tool-wide scope", () => {
    const { service } = setup();
    expect(
      service.cardFor(call(derivedTool("read_text_file"), { path: "/tmp/x/a" })).matchingScope.resource,
    ).toBe("filesystem:read_text_file");
    const search = pubmed.tools.find((t) => t.id === "search") as ToolManifest;
    expect(service.cardFor(call(search, { query: "q" })).matchingScope).toEqual({
      resource: "pubmed:search",
      description: "every pubmed:search call, whatever its arguments, for the rest of this session",
    });
  });
});

describe("allow_always", () => {
  test("is offered on the card, allows the call, records user_always and switches the session", async () => {
    const { service, ledger } = setup();
    const first = call(derivedTool("write_file"), { path: "/tmp/x/a.txt", content: "hi" });
    expect(service.cardFor(first).allowedDecisions).toContain("allow_always");
    expect(service.approvalMode("s1")).toBe("ask_for_dangerous");
    const result = await service.decide(first, { decision: "allow_always" });
    expect(result.decisionSource).toBe("user_always");
    expect(service.approvalMode("s1")).toBe("always_allow");
    expect(await service.authorize(first)).toEqual({
      allowed: true,
      authorizationId: result.authorizationId,
    });
    const elsewhere = call(derivedTool("write_file"), { path: "/etc/b.txt", content: "hi" });
    expect((await service.authorize(elsewhere)).allowed).toBe(true);
    // Another session still asks.
    const other = call(derivedTool("write_file"), { path: "/tmp/x/a.txt", content: "hi" }, "s2");
    expect((await service.authorize(other)).allowed).toBe(false);
    expect((await ledger.listAuthorizations()).map((r) => [r.sessionId, r.decisionSource])).toEqual([
      ["s1", "user_always"],
      ["s1", "always_allow"],
    ]);
  });
});
