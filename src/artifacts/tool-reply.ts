/** The answer of a built-in tool: a ToolMessage with a status inside a graph, JSON text outside one. */
import { ToolMessage } from "@langchain/core/messages";
import { neutralizePromptTags } from "../governance/envelope/index.js";

/**
 * Builds a built-in tool's answer. Failures are answers too (`status: "error"`), never throws, so the
 * model reads the structured error instead of the run failing. The body is small and says nothing
 * twice, so the model reads it as compact JSON; code reads the same object from the message's
 * `artifact`, as it reads a governed MCP call's outcome.
 * @param name the tool's name
 * @param toolCallId the call's id (absent when the tool is invoked outside a tool call)
 * @param content the JSON body
 * @param ok whether the call succeeded
 * @returns a ToolMessage, or the JSON text without a tool call id
 */
export function toolReply(
  name: string,
  toolCallId: string | undefined,
  content: unknown,
  ok: boolean,
): ToolMessage | string {
  // The body may quote the model's arguments (a job id, a path) and a server's text (a URL, an error):
  // the model reads it inert, as every other tool text; code reads the artifact as it was.
  const text = neutralizePromptTags(JSON.stringify(content));
  if (toolCallId === undefined) return text;
  return new ToolMessage({
    content: text,
    artifact: content,
    tool_call_id: toolCallId,
    name,
    status: ok ? "success" : "error",
  });
}
