/**
 * Approval cards in a hand-built `StateGraph` with the node set: `createGovernedToolNode` asks by
 * default (one card per dangerous call, each in its own `Send` task); the graph needs a checkpointer.
 * Run: `npx tsx examples/approvals/state-graph.ts`
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import {
  createGovernedToolNode,
  createModelNode,
  GovernedStateAnnotation,
  governedToolsCondition,
} from "sciencegate";
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
const app = new StateGraph(GovernedStateAnnotation)
  .addNode("agent", createModelNode({ model: scriptedModel(), governance }))
  .addNode("tools", createGovernedToolNode({ governance }))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", governedToolsCondition, ["tools", END])
  .addEdge("tools", "agent")
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "state-graph-example" } };

try {
  const state = await answerCards(
    (resume) =>
      app.invoke(resume ? new Command({ resume }) : { messages: [new HumanMessage(QUESTION)] }, config),
    hitlCard,
    hitlAnswer,
  );
  console.log(`answer: ${state.messages.at(-1)?.text}`);
  await printLedger(governance, "state-graph-example");
} finally {
  await close();
}
