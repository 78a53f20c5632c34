/**
 * The agent step of the demo, offline (scripted model) or live (a real chat model): the first turn's
 * deferred tools and auto-promotion, then the streamed thread with every tool call and result,
 * download progress and approval cards, then the final answer and the authorizations it took.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { autoPromote, createGovernedAgent, deferredToolsPromptSection, type Governance } from "sciencegate";
import { answerCards } from "./approval-prompt.js";
import { describeMessage, describeProgress } from "./describe-message.js";
import { runAgent } from "./run-agent.js";

/** The instructions both the scripted and a live model get (before Sciencegate's own prompt sections). */
export const DEMO_SYSTEM_PROMPT = [
  "You are a research assistant with governed access to scientific sources; find their tools with tool_search.",
  "Answer with one fact per line and cite every fact with the citation label of the record it comes from, e.g. [PMID:123].",
  "To read a paper in full: call its source's prepare_paper_download tool, then artifact_download with that result's",
  "invocationId as mcpInvocationId and the candidate's candidateId, then, in a later turn, paper_extract_pdf with the",
  "download's jobId. Say you read the full text only after paper_extract_pdf succeeded.",
].join(" ");

/** Options of {@link runAgentStep}. */
export interface AgentStepOptions {
  governance: Governance;
  model: BaseChatModel;
  question: string;
  /** The thread, also the governance session. */
  threadId: string;
  /** Ask a human for each approval card (stdin is a TTY), else answer `allow_matching`. */
  interactive: boolean;
}

/**
 * Runs and prints the agent thread.
 * @param options runtime, model, question, thread and approval mode
 * @returns the final answer's text
 */
export async function runAgentStep(options: AgentStepOptions): Promise<string> {
  const { governance, threadId } = options;
  const agent = createGovernedAgent({
    model: options.model,
    governance,
    systemPrompt: DEMO_SYSTEM_PROMPT,
    checkpointer: new MemorySaver(),
  });
  const firstTurnTools = governance.tools(threadId);
  console.log(`  question: ${options.question}`);
  console.log(
    `  first turn: ${firstTurnTools.length} deferred tools shown by name only; its keywords auto-promote ${autoPromote(options.question, firstTurnTools).join(", ") || "nothing"}`,
  );
  // The system prompt's deferred-tools section as the first model call sees it (before auto-promotion).
  const section = deferredToolsPromptSection(firstTurnTools, undefined).split("\n");
  console.log(`  deferred prompt (${section.length} lines, ${section.join("\n").length} characters):`);
  for (const line of [...section.slice(0, 4), "…", ...section.slice(-2)])
    console.log(`    | ${line.slice(0, 110)}`);
  const state = await runAgent({
    agent,
    threadId,
    input: { messages: [new HumanMessage(options.question)] },
    onMessage: async (message) => {
      for (const line of await describeMessage(message)) console.log(line);
    },
    onProgress: (event) => console.log(describeProgress(event)),
    answer: (cards) =>
      answerCards(cards, { interactive: options.interactive, write: (line) => console.log(line) }),
  });
  console.log(`  promoted this run: ${Object.keys(state.promotion.promoted).join(", ")}`);
  const answer = state.messages.at(-1)?.text ?? "";
  console.log("  final answer:");
  for (const line of answer.split("\n")) console.log(`    ${line}`);
  const auths = await governance.ledger.listAuthorizations({ sessionId: threadId });
  console.log(
    `  authorizations: ${auths.map((a) => `${a.sourceId}/${a.toolId}:${a.decisionSource}`).join(", ")}`,
  );
  return answer;
}
