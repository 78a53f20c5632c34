import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { createLlmWikiServer } from "../../../src/servers/llm-wiki/llm-wiki-server.js";
import { startReferenceWikiServer } from "../../../src/testing/reference-wiki-server.js";
import { startWikiHarness, structured, WIKI_PAGES, type WikiHarness } from "./wiki-harness.js";

let harness: WikiHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("llm-wiki search", () => {
  test("sends question, top_k and hybrid mode, consumes sources, passes page fields through", async () => {
    harness = await startWikiHarness();
    const result = await harness.call("search", { query: "base editing deaminase", limit: 2 });
    expect(result.isError).toBeFalsy();
    const wikiRequests = harness.wiki.requests;
    expect(wikiRequests).toHaveLength(1);
    expect(wikiRequests[0]).toMatchObject({
      method: "POST",
      path: "/api/v1/query/structured",
      body: { question: "base editing deaminase", top_k: 2, mode: "hybrid" },
    });
    // Never the answer-generation endpoint.
    expect(wikiRequests.some((r) => r.path === "/api/v1/query")).toBe(false);
    const out = structured(result);
    expect(out).toMatchObject({ sourceId: "llm-wiki", toolId: "search", untrusted: true });
    const first = out.records[0];
    expect(first).toMatchObject({
      identifier: "concepts/crispr-base-editing",
      identifierType: "wiki-page",
      title: "CRISPR base editing",
      contentScope: "curated-record",
      fullTextRetrieved: false,
      url: `${harness.wiki.origin}/api/v1/wiki/concepts/crispr-base-editing`,
    });
    expect(first.primaryCitation.url).toBe(first.url);
    expect(first.primaryCitation.version).toMatch(/^[0-9a-f]{64}$/);
    expect(first.structuredData).toMatchObject({
      category: "concept",
      tags: ["genome-editing", "crispr"],
      page_id: "concepts-crispr-base-editing",
    });
    expect(first.structuredData.body).toContain("deaminase");
    expect(first.crossReferences).toEqual([
      { identifier: "doi:10.1038/nature17946", identifierType: "source-ref" },
      { identifier: "lab-notebook-2024-03.pdf", identifierType: "source-ref" },
    ]);
    expect(out.records.length).toBeLessThanOrEqual(2);
  });

  test("a hostile path in the wiki's answer never becomes a citation; the safe pages stay", async () => {
    const origin = "http://127.0.0.1:8100";
    const answer = {
      sources: [
        { path: "../../etc/passwd", title: "escape" },
        { path: "https://evil.example.com/x", title: "foreign" },
        { page_id: "notes/ok", title: "Fine", url: "https://evil.example.com/ok" },
      ],
    };
    // The fetch seam of the bridge (not a global stub) stands in for a hostile wiki.
    const fetch = async () => new Response(JSON.stringify(answer), { status: 200 });
    const server = createLlmWikiServer({ env: { SCIENCE_AGENT_LLM_WIKI_URL: origin }, fetch });
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(b);
    const out = structured((await client.callTool({ name: "search", arguments: { query: "x" } })) as never);
    await client.close();
    expect(out.records.map((r: { url: string }) => r.url)).toEqual([`${origin}/api/v1/wiki/notes/ok`]);
    expect(out.warnings).toHaveLength(2);
    // The wiki's own url field is passed through as data, never used for the citation.
    expect(out.records[0].structuredData.url).toBe("https://evil.example.com/ok");
    expect(out.records[0].primaryCitation.url).toBe(`${origin}/api/v1/wiki/notes/ok`);
  });
});

describe("llm-wiki get_page", () => {
  test("returns the page object as one record whose version is the SHA-256 of the page response", async () => {
    harness = await startWikiHarness();
    const result = await harness.call("get_page", { path: "concepts/prime-editing" });
    const out = structured(result);
    expect(harness.wiki.requests[0]).toMatchObject({
      method: "GET",
      path: "/api/v1/wiki/concepts/prime-editing",
    });
    const raw = await (await fetch(`${harness.wiki.origin}/api/v1/wiki/concepts/prime-editing`)).text();
    const record = out.records[0];
    expect(record.primaryCitation.version).toBe(createHash("sha256").update(raw).digest("hex"));
    expect(record.structuredData).toEqual(JSON.parse(raw));
    expect(record.crossReferences).toEqual([
      { identifier: "doi:10.1038/s41586-019-1711-4", identifierType: "source-ref" },
    ]);
    expect(record.fullTextRetrieved).toBe(false);
  });

  test("source_refs with a script tag or a foreign URL stay cross-reference text, never citation URLs", async () => {
    harness = await startWikiHarness();
    const record = structured(await harness.call("get_page", { path: "methods/guide-design" })).records[0];
    expect(record.crossReferences).toEqual([
      { identifier: "<script>alert('x')</script>", identifierType: "source-ref" },
      { identifier: "https://evil.example.com/steal?c=1", identifierType: "source-ref" },
    ]);
    const urls = [record.url, ...record.citations.map((c: { url: string }) => c.url)];
    for (const url of urls) expect(url.startsWith(`${harness.wiki.origin}/api/v1/wiki/`)).toBe(true);
    expect(JSON.stringify(record.citations)).not.toContain("evil.example.com");
  });

  test("a page that does not exist is not_found", async () => {
    harness = await startWikiHarness();
    const result = await harness.call("get_page", { path: "concepts/nope" });
    expect(result.isError).toBe(true);
    expect(structured(result).error).toMatchObject({ code: "not_found", status: 404 });
  });

  test.each([
    "../x",
    "https://evil",
    "%2e%2e",
    "concepts/%2E%2E/%2e%2e/secret",
    "//evil.example.com/x",
    "a\\..\\b",
  ])("hostile path %s is rejected before any request reaches the wiki", async (path) => {
    harness = await startWikiHarness();
    const result = await harness.call("get_page", { path });
    expect(result.isError).toBe(true);
    expect(structured(result).error.code).toBe("invalid_input");
    const batch = await harness.call("get_pages", { paths: ["glossary", path] });
    expect(structured(batch).error).toMatchObject({ code: "invalid_input" });
    expect(structured(batch).error.message).toContain("paths[1]");
    expect(harness.wiki.requests).toHaveLength(0);
  });
});

describe("llm-wiki get_pages", () => {
  test("a budget that leaves pages out reports omitted_paths apart from missing, with the budget statistics", async () => {
    harness = await startWikiHarness();
    const paths = ["concepts/crispr-base-editing", "concepts/prime-editing", "does/not-exist", "glossary"];
    const out = structured(await harness.call("get_pages", { paths, max_tokens: 150 }));
    expect(harness.wiki.requests[0]).toMatchObject({
      method: "POST",
      path: "/api/v1/wiki/pages/batch",
      body: { paths, max_tokens: 150, token_budget_enabled: true },
    });
    expect(out.records.map((r: { identifier: string }) => r.identifier)).toEqual([
      "concepts/crispr-base-editing",
      "glossary",
    ]);
    expect(out.data.missing).toEqual(["does/not-exist"]);
    expect(out.data.omitted_paths).toEqual(["concepts/prime-editing"]);
    expect(out.data).toMatchObject({ token_budget: 150, truncated: true, requested: 4, returned: 2 });
    expect(out.data.tokens_used).toBeGreaterThan(0);
    // The batch form lacks sources and update times: the result points at get_page.
    expect(out.data.hint).toContain("get_page");
    expect(out.records[0].contentScope).toBe("curated-record");
  });

  test("max_tokens defaults to 8000 and nothing is omitted when the budget suffices", async () => {
    harness = await startWikiHarness();
    const out = structured(
      await harness.call("get_pages", { paths: ["glossary", "concepts/prime-editing"] }),
    );
    expect(harness.wiki.requests[0]?.body).toMatchObject({ max_tokens: 8000 });
    expect(out.data.omitted_paths).toEqual([]);
    expect(out.data.missing).toEqual([]);
    expect(out.records).toHaveLength(2);
  });
});

describe("llm-wiki configuration", () => {
  test("the Bearer header is sent only when SCIENCE_AGENT_LLM_WIKI_TOKEN is set", async () => {
    harness = await startWikiHarness({
      wikiToken: "s3cret",
      env: { SCIENCE_AGENT_LLM_WIKI_TOKEN: "s3cret" },
    });
    expect(structured(await harness.call("get_page", { path: "glossary" })).records).toHaveLength(1);
    expect(harness.wiki.requests[0]?.authorization).toBe("Bearer s3cret");
    await harness.close();

    harness = await startWikiHarness({ env: { SCIENCE_AGENT_LLM_WIKI_TOKEN: "" } });
    await harness.call("get_page", { path: "glossary" });
    expect(harness.wiki.requests[0]?.authorization).toBeUndefined();
    await harness.close();

    harness = await startWikiHarness({ wikiToken: "s3cret" });
    const refused = await harness.call("search", { query: "pam" });
    expect(structured(refused).error).toMatchObject({ code: "unauthorized", status: 401 });
    expect(structured(refused).error.message).toContain("SCIENCE_AGENT_LLM_WIKI_TOKEN");
  });

  test.each([
    "http://127.0.0.1:8100/api/v1",
    "http://127.0.0.1:8100/wiki?x=1",
    "ftp://127.0.0.1",
    "not a url",
  ])("SCIENCE_AGENT_LLM_WIKI_URL=%s is rejected with a clear message", (url) => {
    expect(() => createLlmWikiServer({ env: { SCIENCE_AGENT_LLM_WIKI_URL: url } })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining("origin only") }),
    );
  });

  test("an unreachable wiki gives an error naming the URL and the reason", async () => {
    const closed = await startReferenceWikiServer({ pagesDir: WIKI_PAGES });
    await closed.close();
    harness = await startWikiHarness({ env: { SCIENCE_AGENT_LLM_WIKI_URL: closed.origin } });
    const result = await harness.call("search", { query: "pam" });
    expect(result.isError).toBe(true);
    const error = structured(result).error;
    expect(error.code).toBe("upstream_unavailable");
    expect(error.message).toContain(closed.origin);
    expect(error.message).toContain("ECONNREFUSED");
  });

  test("the manifest declares exactly the server's tools and schemas, private and off by default", async () => {
    harness = await startWikiHarness();
    const manifest = JSON.parse(
      readFileSync(resolve(import.meta.dirname, "../../../manifests/llm-wiki.json"), "utf8"),
    );
    const { tools } = await harness.client.listTools();
    expect(manifest.tools.map((t: { mcpToolName: string }) => t.mcpToolName)).toEqual(
      tools.map((t) => t.name),
    );
    for (const tool of manifest.tools) {
      expect(tool.inputSchema).toEqual(tools.find((t) => t.name === tool.mcpToolName)?.inputSchema);
    }
    expect(manifest).toMatchObject({
      id: "llm-wiki",
      kind: "knowledge-base",
      enabledByDefault: false,
      cache: { enabled: false },
      governance: { dataClassification: "private" },
    });
  });
});
