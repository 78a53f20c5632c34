/**
 * The README's quick start for an existing LangGraph app: spread the governed state into yours, add
 * the model node and the governed tool node, route with `governedToolsCondition`. Run it with
 * `npx tsx examples/langgraph-app.ts` (the scripted model below calls the real PubMed unless
 * SCIENCEGATE_PUBMED_BASE_URL points elsewhere: `npx tsx examples/offline/run.ts examples/langgraph-app.ts`
 * runs it offline); put your own chat model in its place.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import {
  createGovernance,
  createGovernedToolNode,
  createModelNode,
  GovernedStateAnnotation,
  governedToolsCondition,
} from "sciencegate";

// Your chat model, e.g. new ChatAnthropic({ model: "claude-sonnet-4-5" }); scripted here to run offline of any LLM.
const model = fakeModel()
  .respondWithTools([{ name: "tool_search", args: { query: "select:mcp__pubmed__search" } }])
  .respondWithTools([{ name: "mcp__pubmed__search", args: { query: "BRAF V600E melanoma" } }])
  .respond(new AIMessage({ id: "final", content: "Here are the papers, with citations." }));

const governance = await createGovernance(); // extensions_config.json, else the bundled science sources
const State = Annotation.Root({ ...GovernedStateAnnotation.spec, topic: Annotation<string>() });
const app = new StateGraph(State)
  .addNode("agent", createModelNode({ model, governance, systemPrompt: "Cite every source." }))
  .addNode("tools", createGovernedToolNode({ governance }))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", governedToolsCondition, ["tools", END])
  .addEdge("tools", "agent")
  .compile({ checkpointer: new MemorySaver() });

try {
  const { messages } = await app.invoke(
    { messages: [new HumanMessage("Recent papers on BRAF V600E melanoma?")], topic: "oncology" },
    { configurable: { thread_id: "thread-42" } },
  );
  for (const message of messages.filter((m) => m.type === "tool")) console.log(message.text.slice(0, 120));
  console.log(messages.at(-1)?.text);
} finally {
  await governance.close();
}
