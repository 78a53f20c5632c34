/**
 * `npx tsx examples/swarm.ts`: a two-agent `@langchain/langgraph-swarm` over governed tools, offline.
 *
 * Swarm agents (`createReactAgent`) bind their tools once, so they get a fixed tool table: every
 * deferred MCP tool promoted up front, plus `tool_search`. The table is built once for the whole app;
 * each call still runs through the broker (validation, permission, cache, rate limits, ledger) in the
 * session of its own thread. The models are scripted fakes and the bundled sources server runs as a
 * real stdio child against loopback fake providers.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { createGovernance, prepareFixedToolTable } from "sciencegate";
import { startOfflineProviders } from "./offline/providers.js";

/** A scripted model turn; explicit ids, because two fake models in one graph would reuse theirs. */
const turn = (id: string, calls: { id: string; name: string; args: Record<string, unknown> }[], text = "") =>
  new AIMessage({ id, content: text, tool_calls: calls.map((c) => ({ ...c, type: "tool_call" as const })) });

const providers = await startOfflineProviders();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-swarm-")) },
});

try {
  const threadId = "swarm-thread-1"; // the thread is the session of its calls
  const literatureModel = fakeModel()
    .respond(
      turn("lit-1", [
        {
          id: "call_lit_1",
          name: "mcp__pubmed__search",
          args: { query: "crispr base editing", max_results: 2 },
        },
      ]),
    )
    .respond(turn("lit-2", [{ id: "call_lit_2", name: "transfer_to_proteins", args: {} }]));
  const proteinModel = fakeModel()
    .respond(
      turn("prot-1", [{ id: "call_prot_1", name: "mcp__uniprot__lookup", args: { accessions: ["P15056"] } }]),
    )
    .respond(
      turn(
        "prot-2",
        [],
        "PubMed papers on base editing and the UniProt entry of BRAF (P15056) are in the thread.",
      ),
    );

  // One table serves both agents and every thread: each call runs in its own thread's session.
  const table = prepareFixedToolTable({ governance });
  console.log(`Each agent's fixed tool table: ${table.length} tools (tool_search + every deferred tool).`);
  const literature = createReactAgent({
    llm: literatureModel,
    tools: [...table, createHandoffTool({ agentName: "proteins" })],
    name: "literature",
    prompt: "You find papers.",
  });
  const proteins = createReactAgent({
    llm: proteinModel,
    tools: [...table, createHandoffTool({ agentName: "literature" })],
    name: "proteins",
    prompt: "You look up proteins.",
  });
  const swarm = createSwarm({ agents: [literature, proteins], defaultActiveAgent: "literature" }).compile({
    checkpointer: new MemorySaver(),
  });

  const result = await swarm.invoke(
    { messages: [new HumanMessage("Find papers on CRISPR base editing, then the UniProt entry of BRAF.")] },
    { configurable: { thread_id: threadId } },
  );

  console.log("\nTranscript:");
  for (const message of result.messages) {
    if (ToolMessage.isInstance(message)) {
      const body = String(message.content);
      console.log(
        `  tool ${message.name}: ${message.status === "error" ? "ERROR " : ""}${body.slice(0, 100)}…`,
      );
    } else if (AIMessage.isInstance(message)) {
      const calls = message.tool_calls?.map((c) => c.name).join(", ");
      console.log(
        `  ai${message.name ? ` (${message.name})` : ""}: ${calls ? `calls ${calls}` : message.text}`,
      );
    } else {
      console.log(`  user: ${message.text}`);
    }
  }
  console.log(`\nActive agent at the end: ${result.activeAgent}`);

  console.log("\nLedger (every governed call, keyed by thread_id:toolCallId):");
  for (const row of await governance.ledger.query({ sessionId: threadId })) {
    console.log(
      `  ${row.sourceId}/${row.toolId}`.padEnd(22),
      row.status.padEnd(6),
      `${row.threadId}:${row.toolCallId}`,
    );
  }
} finally {
  await governance.close();
  await providers.server.close();
}
