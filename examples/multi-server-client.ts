/**
 * `npx tsx examples/multi-server-client.ts`: an app that already reaches its MCP servers through
 * `@langchain/mcp-adapters`' `MultiServerMCPClient` keeps its client and governs it with
 * `fromMultiServerMCPClient`. The client starts the lab's server (./multi-server-client/lab-server.ts) as a
 * stdio child; the server has no manifest, so Sciencegate derives one from its live tool list. A `createAgent`
 * with `governanceMiddleware` and a scripted model loads the tool with `tool_search`, calls it through the
 * broker, and answers; the call's ledger row is printed. Offline: nothing leaves the machine.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createAgent } from "langchain";
import { fromMultiServerMCPClient, governanceMiddleware } from "sciencegate";
import { hasCalled, lastToolResult, ScriptedChatModel } from "sciencegate/testing";

const labServer = fileURLToPath(new URL("./multi-server-client/lab-server.ts", import.meta.url));
const client = new MultiServerMCPClient({
  mcpServers: {
    lab: { transport: "stdio", command: process.execPath, args: ["--import", "tsx", labServer] },
  },
});
const governance = await fromMultiServerMCPClient(client, {
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-multi-server-")) },
});

try {
  const model = new ScriptedChatModel((messages, turn) => {
    if (turn === 0)
      return { toolCalls: [{ name: "tool_search", args: { query: "select:mcp__lab__search" } }] };
    if (!hasCalled(messages, "mcp__lab__search"))
      return { toolCalls: [{ name: "mcp__lab__search", args: { query: "EGFR" } }] };
    return { text: "Two notes mention EGFR." };
  });
  const agent = createAgent({
    model,
    tools: [],
    middleware: [governanceMiddleware({ governance })],
    checkpointer: new MemorySaver(),
  });
  const { messages } = await agent.invoke(
    { messages: [new HumanMessage("Which notes mention EGFR?")] },
    { configurable: { thread_id: "lab-1" } },
  );
  const seen = lastToolResult<{ invocationId: string }>(messages, "mcp__lab__search");
  for (const row of await governance.ledger.query({ sessionId: "lab-1" })) {
    const mark = row.invocationId === seen?.invocationId ? " (the result the model saw)" : "";
    console.log(`ledger: ${row.sourceId}/${row.toolId} ${row.status}${mark}`);
  }
  console.log(`answer: ${messages.at(-1)?.content}`);
} finally {
  await governance.close(); // closes the client and the stdio child it started
}
