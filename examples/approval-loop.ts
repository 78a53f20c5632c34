/**
 * A human-in-the-loop approval loop around a LangGraph thread, offline: the bundled science sources
 * against the fake providers, a scripted model that makes two PubMed searches and a UniProt search
 * in one turn, and a policy that makes PubMed calls dangerous. Each pause shows one card per call
 * (langchain's `HITLRequest`, with Sciencegate's own card under `sciencegate`, which this loop reads
 * to offer all four decisions); in a terminal you answer them, otherwise the answers below are given
 * in code. A native decision answers an HITL card as well.
 * Run: `npx tsx examples/approval-loop.ts`
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, INTERRUPT, type Interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import {
  type ApprovalHitlRequest,
  createGovernance,
  createGovernedAgent,
  type PermissionCard,
  type PermissionDecision,
} from "sciencegate";
import { startOfflineProviders } from "./offline/providers.js";

const providers = await startOfflineProviders();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-approvals-")) },
  permissions: {
    // The app's own rule: PubMed searches need a human (say, because queries may name patients).
    policy: { isDangerous: (call) => (call.sourceId === "pubmed" ? true : undefined) },
  },
});

const model = fakeModel()
  .respondWithTools([
    { name: "tool_search", args: { query: "select:mcp__pubmed__search,mcp__uniprot__search" } },
  ])
  .respondWithTools([
    { name: "mcp__pubmed__search", args: { query: "BRAF V600E melanoma" } },
    { name: "mcp__pubmed__search", args: { query: "BRAF inhibitor resistance" } },
    { name: "mcp__uniprot__search", args: { query: "BRAF human" } },
  ])
  .respond(new AIMessage({ id: "final", content: "Here is what the approved searches found." }));

// createGovernedAgent puts the approval gate in front of every MCP call by default.
const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "approval-demo" } };

// Scripted answers when nobody sits at a terminal: the first card allows every PubMed search.
const scripted: PermissionDecision[] = [{ decision: "allow_matching" }];
const interactive = Boolean(process.stdin.isTTY);

async function answer(card: PermissionCard): Promise<PermissionDecision> {
  if (!interactive) return scripted.shift() ?? { decision: "deny", message: "no scripted answer left" };
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const typed = await terminal.question(
        `${card.summary}\n  allow matching covers ${card.matchingScope.description}\n` +
          "  [1] allow once  [2] allow matching  [3] deny  [4] always allow (this session): ",
      );
      if (typed.trim() === "1") return { decision: "allow_once" };
      if (typed.trim() === "2") return { decision: "allow_matching" };
      if (typed.trim() === "3") return { decision: "deny", message: "denied in the terminal" };
      if (typed.trim() === "4") return { decision: "allow_always" };
    }
  } finally {
    terminal.close();
  }
}

try {
  let state = await agent.invoke({ messages: [new HumanMessage("What is known about BRAF V600E?")] }, config);
  while (isInterrupted(state)) {
    const cards = state[INTERRUPT] as Interrupt<ApprovalHitlRequest>[];
    console.log(`${cards.length} approval card(s) waiting`);
    // Answer one card per pass: an allow_matching grant releases the others of its type by itself.
    const [first] = cards;
    if (!first?.id || !first.value) break;
    const card = first.value.sciencegate;
    console.log(`- ${card.summary} (${card.action}, risk ${card.risk})`);
    const decision = await answer(card);
    console.log(`  -> ${decision.decision}`);
    state = await agent.invoke(new Command({ resume: { [first.id]: decision } }), config);
  }
  for (const message of state.messages.filter((m) => m.type === "tool")) {
    console.log(`tool result: ${message.text.slice(0, 100)}`);
  }
  console.log(state.messages.at(-1)?.text);
  const rows = await governance.ledger.listAuthorizations({ sessionId: "approval-demo" });
  console.log(`authorizations: ${rows.map((r) => `${r.toolId}:${r.decisionSource}`).join(", ")}`);
} finally {
  await governance.close();
  await providers.server.close();
}
