/**
 * `npx tsx examples/testing.ts`: testing an app's governed agent with `sciencegate/testing`, with any test
 * runner (this file uses none). `createTestGovernance` builds the real runtime over an MCP server linked in
 * memory, with in-memory stores and a scripted human who answers approval cards; `ScriptedChatModel` is a
 * real chat model that plays a script. The lab's `save_note` tool has no `readOnlyHint`, so its derived
 * manifest makes it dangerous: the run pauses on an approval card, the script allows it once, and the call
 * runs and is recorded. Each line printed is what a test would assert.
 */
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createGovernedAgent } from "sciencegate";
import { createTestGovernance, hasCalled, lastToolResult, ScriptedChatModel } from "sciencegate/testing";
import { z } from "zod";

/** The app's own MCP server: one tool that writes. */
function labServer(): McpServer {
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  server.registerTool(
    "save_note",
    { description: "Save a note in the lab notebook.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `saved: ${text}` }] }),
  );
  return server;
}

const t = await createTestGovernance({ servers: { lab: labServer }, approvals: ["allow_once"] });
try {
  const model = new ScriptedChatModel((messages, turn) => {
    if (turn === 0)
      return { toolCalls: [{ name: "tool_search", args: { query: "select:mcp__lab__save_note" } }] };
    if (!hasCalled(messages, "mcp__lab__save_note"))
      return { toolCalls: [{ name: "mcp__lab__save_note", args: { text: "BRAF V600E" } }] };
    return { text: "Saved." };
  });
  const agent = createGovernedAgent({ model, governance: t.governance, checkpointer: new MemorySaver() });
  const { messages } = await t.run(
    agent,
    { messages: [new HumanMessage("Save a note about BRAF V600E.")] },
    { configurable: { thread_id: "test-1" } },
  );

  console.log(
    `cards answered: ${t.answered.map((a) => `${a.card.toolId} -> ${a.decision.decision}`).join(", ")}`,
  );
  const result = lastToolResult<{ invocationId: string }>(messages, "mcp__lab__save_note");
  const rows = await t.governance.ledger.query({ sessionId: "test-1" });
  const row = rows.find((r) => r.toolId === "save_note");
  console.log(
    `ledger: lab/save_note ${row?.status} (the model saw this row: ${result?.invocationId === row?.invocationId})`,
  );
  console.log(`answer: ${messages.at(-1)?.content}`);
} finally {
  await t.close();
}
