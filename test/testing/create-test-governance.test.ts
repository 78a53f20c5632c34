/**
 * `createTestGovernance` (`sciencegate/testing`): the real runtime over an in-process MCP server, driven
 * by a real governed agent, with the scripted human answering its approval cards.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import type { ApprovalScript } from "../../src/testing/create-test-governance.js";
import { createTestGovernance, ManualClock, ScriptedChatModel } from "../../src/testing/index.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

/** A lab server whose `write` tool counts its calls. */
function labServer(calls: string[]): McpServer {
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  server.registerTool(
    "write",
    { description: "Writes a note.", inputSchema: { query: z.string() } },
    async ({ query }) => {
      calls.push(query);
      return { content: [{ type: "text", text: `wrote ${query}` }] };
    },
  );
  return server;
}

/** Its manifest: `write` is dangerous (not read-only), so every call asks for approval. */
const labManifest = makeSource({
  id: "lab",
  tools: [
    makeTool({
      id: "write",
      readOnly: false,
      permission: {
        action: "lab:write",
        resourceTemplate: "lab:{query}",
        summaryTemplate: 'write "{query}"',
      },
      routing: { keywords: [], mode: "off", priority: 0 },
    }),
  ],
});

/** A model that loads `write`, calls it once with `query`, then answers. */
const writer = (query: string) =>
  new ScriptedChatModel((_, turn) =>
    turn === 0
      ? { toolCalls: [{ name: "tool_search", args: { query: "select:mcp__lab__write" } }] }
      : turn === 1
        ? { toolCalls: [{ name: "mcp__lab__write", args: { query } }] }
        : { text: "done" },
  );

async function runWriter(approvals: ApprovalScript | undefined, thread: string) {
  const calls: string[] = [];
  const t = await createTestGovernance({
    servers: { lab: labServer(calls) },
    manifests: [labManifest],
    approvals,
  });
  const agent = createGovernedAgent({
    model: writer("n1"),
    governance: t.governance,
    checkpointer: new MemorySaver(),
  });
  const run = t.run(
    agent,
    { messages: [new HumanMessage("write")] },
    { configurable: { thread_id: thread } },
  );
  return { t, calls, run };
}

describe("createTestGovernance", () => {
  test("run() answers the card by the script and resumes: the call runs once, with its row", async () => {
    const { t, calls, run } = await runWriter(["allow_once"], "t-allow");
    try {
      const result = (await run) as { messages: { content: unknown }[] };
      expect(calls).toEqual(["n1"]);
      expect(t.answered.map((a) => [a.card.summary, a.decision.decision])).toEqual([
        ['write "n1"', "allow_once"],
      ]);
      expect(result.messages.at(-1)?.content).toBe("done");
      const rows = await t.governance.ledger.query();
      expect(rows.map((r) => [r.sourceId, r.toolId, r.status])).toEqual([["lab", "write", "ok"]]);
    } finally {
      await t.close();
    }
  });

  test("a function script that denies: the tool never runs", async () => {
    const { t, calls, run } = await runWriter(
      (card) => (card.args.query === "n1" ? { decision: "deny", message: "not this one" } : "allow_once"),
      "t-deny",
    );
    try {
      await run;
      expect(calls).toEqual([]);
      expect(t.answered.map((a) => a.decision)).toEqual([{ decision: "deny", message: "not this one" }]);
    } finally {
      await t.close();
    }
  });

  test("no script: the first card fails the run, naming it; a list that runs out does too", async () => {
    const none = await runWriter(undefined, "t-none");
    await expect(none.run).rejects.toThrow('no approvals script, and a card asks: write "n1"');
    await none.t.close();
    const empty = await runWriter([], "t-empty");
    await expect(empty.run).rejects.toThrow('the approvals script ran out at the card: write "n1"');
    await empty.t.close();
    expect(none.calls).toEqual([]);
    expect(empty.calls).toEqual([]);
  });

  test("memory stores write no file; `files` stores write SQLite in the data directory; close() removes it", async () => {
    const clock = new ManualClock(1_000);
    const memory = await createTestGovernance({ clock });
    expect(memory.clock).toBe(clock);
    expect(memory.governance.dataDir).toBe(memory.dataDir);
    expect(existsSync(join(memory.dataDir, "ledger.sqlite"))).toBe(false);
    await memory.close();
    expect(existsSync(memory.dataDir)).toBe(false);

    const files = await createTestGovernance({ stores: "files" });
    expect(existsSync(join(files.dataDir, "ledger.sqlite"))).toBe(true);
    await files.close();
    await files.close(); // idempotent
    expect(existsSync(files.dataDir)).toBe(false);
  });

  test("the manifests given govern the servers given; a bad manifest is refused", async () => {
    const calls: string[] = [];
    await using t = await createTestGovernance({
      servers: { lab: labServer(calls) },
      manifests: [labManifest],
    });
    const write = t.governance.catalog.snapshot()?.tools.find((tool) => tool.sourceId === "lab");
    expect(write).toMatchObject({ toolId: "write", manifest: { readOnly: false } });
    await expect(
      createTestGovernance({ manifests: [{ ...labManifest, tools: [{ id: "" }] } as never] }),
    ).rejects.toMatchObject({ code: "INVALID_MANIFEST" });
  });
});
