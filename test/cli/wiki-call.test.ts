import { afterEach, describe, expect, test } from "vitest";
import { bundledServerCommand } from "../../src/config/default-config.js";
import { type ReferenceWiki, startReferenceWikiServer } from "../../src/testing/reference-wiki-server.js";
import { WIKI_PAGES } from "../servers/llm-wiki/wiki-harness.js";
import { runCli, tempDir, writeJson } from "./cli-harness.js";

let wiki: ReferenceWiki | undefined;
afterEach(async () => {
  await wiki?.close();
  wiki = undefined;
});

describe("sciencegate call against the LLM Wiki", () => {
  test("--enable-source llm-wiki switches the source on for the call's session", async () => {
    wiki = await startReferenceWikiServer({ pagesDir: WIKI_PAGES });
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: {
        "llm-wiki": {
          type: "stdio",
          ...bundledServerCommand("llm-wiki"),
          env: { SCIENCE_AGENT_LLM_WIKI_URL: "$SCIENCE_AGENT_LLM_WIKI_URL" },
        },
      },
    });
    const env = { SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin };
    // The wiki is private data: a scripted call answers its approval card with --approve.
    const args = [
      "call",
      "mcp__llm-wiki__search",
      "--config",
      config,
      "--approve",
      "once",
      "--args",
      '{"query":"base editing"}',
    ];

    const off = await runCli(args, env, dir);
    expect(off.code).toBe(1);
    expect(off.stderr).toContain("SOURCE_DISABLED");
    expect(wiki.requests).toHaveLength(0);

    const on = await runCli([...args, "--enable-source", "llm-wiki", "--json"], env, dir);
    expect(on.code).toBe(0);
    const outcome = JSON.parse(on.stdout);
    expect(outcome.result).toMatchObject({ sourceId: "llm-wiki", toolId: "search", untrusted: true });
    expect(outcome.result.data).toMatchObject({ mode: "hybrid" });
    expect(wiki.requests.map((r) => r.body)).toEqual([
      { question: "base editing", top_k: 5, mode: "hybrid" },
    ]);

    const unknown = await runCli([...args, "--enable-source", "no-such-source"], env, dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no-such-source");
  }, 60_000);

  test("serve llm-wiki refuses a URL with a path, naming the fix", async () => {
    const run = await runCli(["serve", "llm-wiki"], {
      SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:8100/api/v1",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("INVALID_CONFIG");
    expect(run.stderr).toContain("origin only");
  });
});
