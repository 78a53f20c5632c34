/**
 * Approval cards with a prebuilt `ToolNode` over the fixed tool table: the governed tools ask when
 * they run inside a graph with a checkpointer, each call in its own thread's session. Route each tool
 * call to the node as its own task (`Send` with `lg_tool_call`) so parallel calls get independent cards.
 * Run: `npx tsx examples/approvals/tool-node.ts`
 */
import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
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
const tools = prepareFixedToolTable({ governance }); // every thread its own session
const model = scriptedModel().bindTools(tools);
const app = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "agent")
  .addConditionalEdges(
    "agent",
    (state) => {
      const last = state.messages.at(-1) as AIMessage;
      const calls = last.tool_calls ?? [];
      return calls.length === 0
        ? END
        : calls.map((call) => new Send("tools", { ...state, lg_tool_call: call }));
    },
    ["tools", END],
  )
  .addEdge("tools", "agent")
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "tool-node-thread" } };

try {
  const state = await answerCards(
    (resume) =>
      app.invoke(resume ? new Command({ resume }) : { messages: [new HumanMessage(QUESTION)] }, config),
    hitlCard,
    hitlAnswer,
  );
  console.log(`answer: ${state.messages.at(-1)?.text}`);
  await printLedger(governance, "tool-node-thread"); // the thread is the session
} finally {
  await close();
}
