/**
 * What the served agent's scripted model does. The first user turn is the offline demo's paper script
 * (tool_search, a parallel pair of searches, an arXiv lookup, a governed download, the full text read);
 * a later turn on the same thread calls the arXiv lookup it promoted in the first turn, without
 * tool_search, and answers with the record's citation.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { McpToolResult } from "sciencegate";
import { hasCalled, lastToolResult, type ScriptedReply } from "sciencegate/testing";
import { shortLabel } from "../demo/describe-message.js";
import { paperAgentScript } from "../demo/paper-agent-script.js";

const LOOKUP = "mcp__arxiv__lookup";

/**
 * The next reply of the served agent's scripted model.
 * @param messages everything the model was sent so far (the whole thread)
 * @returns tool calls, or the final answer
 */
export function serverScript(messages: BaseMessage[]): ScriptedReply {
  const turnStart = messages.findLastIndex((message) => HumanMessage.isInstance(message));
  if (messages.slice(0, turnStart).every((message) => !HumanMessage.isInstance(message))) {
    return paperAgentScript(messages);
  }
  const turn = messages.slice(turnStart);
  if (!hasCalled(turn, LOOKUP)) {
    return { toolCalls: [{ name: LOOKUP, args: { ids: ["arXiv:2403.01234"] } }] };
  }
  const record = lastToolResult<McpToolResult>(turn, LOOKUP)?.records[0];
  return {
    text: record ? `- arXiv: "${record.title}" ${shortLabel(record)}.` : "The arXiv lookup did not answer.",
  };
}
