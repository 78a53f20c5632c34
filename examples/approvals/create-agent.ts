/**
 * Approval cards with langchain's `createAgent` and `governanceMiddleware`: each dangerous call pauses
 * with langchain's own `HITLRequest` (what Agent Chat UI and LangGraph Studio render), answered with an
 * `HITLResponse` (`approve`, `edit` or `reject`).
 * Run: `npx tsx examples/approvals/create-agent.ts`
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { governanceMiddleware } from "sciencegate";
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
const agent = createAgent({
  model: scriptedModel(),
  tools: [],
  middleware: [governanceMiddleware({ governance })],
  checkpointer: new MemorySaver(),
});
const config = { configurable: { thread_id: "create-agent-example" } };

try {
  const state = await answerCards(
    (resume) =>
      resume
        ? agent.invoke(new Command({ resume }), config)
        : agent.invoke({ messages: [{ role: "user", content: QUESTION }] }, config),
    hitlCard,
    hitlAnswer,
  );
  console.log(`answer: ${state.messages.at(-1)?.text}`);
  await printLedger(governance, "create-agent-example");
} finally {
  await close();
}
