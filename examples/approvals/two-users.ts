/**
 * One fixed tool table for many users: `prepareFixedToolTable({ governance })` is built once, without naming
 * a session, and serves every thread of the app. Each call runs in its own thread's session, so Alice's
 * "allow matching" grant covers her later PubMed searches but never Bob's: his matching search, in his
 * own thread, raises its own card. (For threads that should share grants, say one user's, resolve their
 * session yourself: `prepareFixedToolTable({ governance, sessionId: (config) => userOf(config) })`.)
 * Run: `npx tsx examples/approvals/two-users.ts`
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, INTERRUPT, type Interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { type ApprovalHitlRequest, type PermissionDecision, prepareFixedToolTable } from "sciencegate";
import { offlineGovernance } from "./offline-setup.js";

const search = (id: string, query: string) =>
  new AIMessage({ id, content: "", tool_calls: [{ id, name: "mcp__pubmed__search", args: { query } }] });
const reply = (id: string, text: string) => new AIMessage({ id, content: text });

// One scripted model for the one agent; the turns below consume its answers in this order.
const model = fakeModel()
  .respond(search("alice-1", "BRAF V600E melanoma"))
  .respond(reply("alice-answer-1", "Alice's first search is done."))
  .respond(search("alice-2", "BRAF V600E melanoma"))
  .respond(reply("alice-answer-2", "Alice's second search is done."))
  .respond(search("bob-1", "BRAF V600E melanoma"))
  .respond(reply("bob-answer-1", "Bob's search was not allowed."));

const { governance, close } = await offlineGovernance(); // PubMed searches are dangerous here
const table = prepareFixedToolTable({ governance }); // built once, no session named: each thread its own
const agent = createReactAgent({ llm: model, tools: table, version: "v2", checkpointer: new MemorySaver() });

/** Runs one user turn in a thread, answering every card with `decide`; prints what happened. */
async function turn(user: string, thread: string, question: string, decide: PermissionDecision) {
  const config = { configurable: { thread_id: thread } };
  let state = await agent.invoke({ messages: [new HumanMessage(question)] }, config);
  let cards = 0;
  while (isInterrupted(state)) {
    const resume: Record<string, PermissionDecision> = {};
    for (const card of state[INTERRUPT] as Interrupt<ApprovalHitlRequest>[]) {
      if (!card.id || !card.value) continue;
      cards += 1;
      console.log(`${user}: card "${card.value.sciencegate.summary}" -> ${decide.decision}`);
      resume[card.id] = decide;
    }
    state = await agent.invoke(new Command({ resume }), config);
  }
  console.log(`${user} (${thread}): ${cards} card(s); answer: ${state.messages.at(-1)?.text}`);
}

try {
  await turn("alice", "thread-alice", "Papers on BRAF V600E melanoma?", { decision: "allow_matching" });
  await turn("alice", "thread-alice", "Once more, please.", { decision: "deny", message: "not asked" });
  await turn("bob", "thread-bob", "Papers on BRAF V600E melanoma?", {
    decision: "deny",
    message: "Bob says no",
  });
  for (const thread of ["thread-alice", "thread-bob"]) {
    for (const row of await governance.ledger.query({ sessionId: thread })) {
      const error = row.error ? ` ${row.error.code}` : "";
      console.log(`ledger ${thread}: ${row.toolCallId} ${row.sourceId}/${row.toolId} ${row.status}${error}`);
    }
    const grants = await governance.ledger.listAuthorizations({ sessionId: thread });
    console.log(
      `authorizations ${thread}: ${grants.map((g) => `${g.toolCallId}:${g.decisionSource}`).join(", ")}`,
    );
  }
} finally {
  await close();
}
