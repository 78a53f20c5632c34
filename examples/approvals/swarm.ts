/**
 * Approval cards in a swarm: `prepareFixedToolTable` gives each agent every governed tool up front
 * (plus `artifact_download` and `paper_extract_pdf`), and each call asks through the same gate. The
 * table is built once for the whole app: each call runs in its own thread's session, so one user's
 * grants never cover another's calls. Give `createReactAgent` `version: "v2"` so parallel calls run as
 * separate tasks with independent cards.
 * Run: `npx tsx examples/approvals/swarm.ts`
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { prepareFixedToolTable } from "sciencegate";
import {
  answerCards,
  hitlAnswer,
  hitlCard,
  offlineGovernance,
  printLedger,
  QUESTION,
  scriptedModel,
} from "./offline-setup.js";

const { governance, close } = await offlineGovernance();
const table = prepareFixedToolTable({ governance }); // every thread its own session
const researcher = createReactAgent({
  llm: scriptedModel("researcher"),
  tools: [...table, createHandoffTool({ agentName: "writer" })],
  name: "researcher",
  version: "v2",
});
const writer = createReactAgent({
  llm: fakeModel().respond(new AIMessage({ id: "writer-answer", content: "Written up." })),
  tools: [createHandoffTool({ agentName: "researcher" })],
  name: "writer",
});
const app = createSwarm({ agents: [researcher, writer], defaultActiveAgent: "researcher" }).compile({
  checkpointer: new MemorySaver(),
});
const config = { configurable: { thread_id: "swarm-thread" } };

try {
  const state = await answerCards(
    (resume) =>
      app.invoke(resume ? new Command({ resume }) : { messages: [new HumanMessage(QUESTION)] }, config),
    hitlCard,
    hitlAnswer,
  );
  console.log(`answer: ${state.messages.at(-1)?.text}`);
  await printLedger(governance, "swarm-thread"); // the thread is the session
} finally {
  await close();
}
