import { afterEach, describe, expect, test } from "vitest";
import { MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { createGovernance, type Governance } from "../../../src/runtime/create-governance.js";
import { createLlmWikiServer } from "../../../src/servers/llm-wiki/llm-wiki-server.js";
import { createInMemoryPool } from "../../../src/testing/in-memory-pool.js";
import { type ReferenceWiki, startReferenceWikiServer } from "../../../src/testing/reference-wiki-server.js";
import { WIKI_PAGES } from "./wiki-harness.js";

let wiki: ReferenceWiki | undefined;
let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  await wiki?.close();
  governance = undefined;
  wiki = undefined;
});

async function open(
  options: { configured?: boolean } = {},
): Promise<{ wiki: ReferenceWiki; governance: Governance }> {
  wiki = await startReferenceWikiServer({ pagesDir: WIKI_PAGES });
  const env = { SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin };
  governance = await createGovernance({
    // The config entry carries the URL mapping Node reads for citation checks (the pool here is in-memory).
    config: options.configured
      ? { mcpServers: { "llm-wiki": { command: "unused-in-memory", env: { ...env } } } }
      : { servers: [] },
    mcp: { pool: createInMemoryPool({ "llm-wiki": () => createLlmWikiServer({ env }) }) },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
    env,
  });
  return { wiki, governance };
}

const search = { sourceId: "llm-wiki", toolId: "search", input: { query: "prime editing" } };

describe("llm-wiki through the broker", () => {
  test("records cite wiki pages at the configured origin and pass the envelope checks", async () => {
    const { wiki, governance } = await open({ configured: true });
    governance.permissions.setApprovalMode("s1", "always_allow");
    governance.sessions.enableSource("s1", "llm-wiki");
    const { result } = await governance.broker.invoke({ ...search, sessionId: "s1" });
    expect(result.records.length).toBeGreaterThan(0);
    for (const record of result.records) {
      expect(record.contentScope).toBe("curated-record");
      expect(record.primaryCitation.url.startsWith(`${wiki.origin}/`)).toBe(true);
      expect(record.fullTextRetrieved).toBe(false);
    }
    expect(result.warnings.join("\n")).not.toContain("instead of https");
  });

  test("without the configured origin, plain-http wiki citations are dropped with a warning", async () => {
    const { governance } = await open();
    governance.permissions.setApprovalMode("s1", "always_allow");
    governance.sessions.enableSource("s1", "llm-wiki");
    const { result } = await governance.broker.invoke({ ...search, sessionId: "s1" });
    expect(result.records).toEqual([]);
    expect(result.warnings.join("\n")).toContain("http:");
  });

  test("the session switch is off by default: SOURCE_DISABLED until the app enables the source", async () => {
    const { wiki, governance } = await open();
    expect(governance.catalog.source("llm-wiki")?.missingTools).toEqual([]);
    // The wiki is private data, so its calls are dangerous: this session allows them unasked.
    governance.permissions.setApprovalMode("s1", "always_allow");
    await expect(governance.broker.invoke({ ...search, sessionId: "s1" })).rejects.toMatchObject({
      code: "SOURCE_DISABLED",
    });
    expect(governance.tools("s1").some((t) => t.name.startsWith("mcp__llm-wiki__"))).toBe(false);
    expect(wiki.requests).toHaveLength(0);

    governance.sessions.enableSource("s1", "llm-wiki");
    const outcome = await governance.broker.invoke({ ...search, sessionId: "s1" });
    expect(outcome.result.sourceId).toBe("llm-wiki");
    expect(outcome.result.data).toMatchObject({ mode: "hybrid" });
    expect(wiki.requests).toHaveLength(1);
    expect(governance.tools("s1").map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "mcp__llm-wiki__search",
        "mcp__llm-wiki__get_page",
        "mcp__llm-wiki__get_pages",
      ]),
    );
    // Another session still has it off.
    await expect(governance.broker.invoke({ ...search, sessionId: "s2" })).rejects.toMatchObject({
      code: "SOURCE_DISABLED",
    });
  });

  test("results are never cached: two identical searches hit the wiki twice", async () => {
    const { wiki, governance } = await open();
    governance.sessions.enableSource("s1", "llm-wiki");
    governance.permissions.setApprovalMode("s1", "always_allow");
    const first = await governance.broker.invoke({ ...search, sessionId: "s1" });
    const second = await governance.broker.invoke({ ...search, sessionId: "s1" });
    expect([first.cacheHit, second.cacheHit]).toEqual([false, false]);
    expect(wiki.requests.filter((r) => r.path === "/api/v1/query/structured")).toHaveLength(2);
  });
});
