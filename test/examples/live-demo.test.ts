/**
 * The `--live` path end to end, offline: the real bundled sources server (pointed at the loopback fake
 * providers through the same variables a user could set) and a stand-in for the provider package that
 * the importer returns, so everything but the network and the vendor model is what a user runs.
 */
import { rmSync } from "node:fs";
import { afterEach, expect, test, vi } from "vitest";
import { runLiveDemo } from "../../examples/demo/live-demo.js";
import { startOfflineProviders } from "../../examples/demo/offline-providers.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";

afterEach(() => {
  vi.restoreAllMocks();
});

test("runs the agent on the sources with the model the environment chose, and checks its citations", async () => {
  const providers = await startOfflineProviders();
  const constructed: unknown[] = [];
  class ChatOpenAI extends ScriptedChatModel {
    constructor(fields: unknown) {
      super(
        (_messages, turn) =>
          turn === 0
            ? {
                toolCalls: [
                  { name: "mcp__pubmed__search", args: { query: "crispr base editing", max_results: 2 } },
                ],
              }
            : { text: "Base editing corrects HBB mutations [PMID:39000001]." },
        "live-test",
      );
      constructed.push(fields);
    }
  }
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    lines.push(args.join(" "));
  });
  const env = { PATH: process.env.PATH, ...providers.env, OPENAI_API_KEY: "sk-test" };
  try {
    const code = await runLiveDemo("What does PubMed say about CRISPR base editing?", {
      env,
      importer: async (specifier) => {
        expect(specifier).toBe("@langchain/openai");
        return { ChatOpenAI };
      },
    });
    const out = lines.join("\n");
    expect(code).toBe(0);
    expect(constructed).toEqual([{ model: "gpt-4.1-mini", apiKey: "sk-test", temperature: 0 }]);
    expect(out).toMatch(
      /Sciencegate demo \(live\): ChatOpenAI gpt-4\.1-mini \(OPENAI_API_KEY\); data in (\S+)/,
    );
    expect(out).toMatch(/^ {2}pubmed\s+ready/m);
    expect(out).toContain("auto-promote mcp__pubmed__search");
    expect(out).toMatch(/← mcp__pubmed__search: 2 record\(s\)/);
    expect(out).toContain("citations checked: 1 facts, 1 citations, each from a governed invocation");
    expect(out).toMatch(/pubmed\/search\s+ok/);
    expect(providers.server.requests.length).toBeGreaterThan(0);
    const dataDir = /data in (\S+)/.exec(out)?.[1];
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  } finally {
    await providers.server.close();
  }
}, 60_000);
