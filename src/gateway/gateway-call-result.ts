/**
 * A governed tool message as an MCP `CallToolResult`: the text the model reads (the same compact text
 * every executor gives a model, citations included), the structured result for code, and `isError`
 * with the governance error body for every failure.
 */
import type { ToolMessage } from "@langchain/core/messages";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolResult } from "../contract/index.js";

/** The `InvokeOutcome` fields a governed MCP call's message carries as its artifact. */
interface InvocationArtifact {
  invocationId: string;
  result: McpToolResult;
}

/**
 * Maps the message of `executeGovernedToolCall` to the MCP result.
 * - A governed MCP call: `content` is the compact result text (`mcpInvocationId`, citation labels,
 *   content scopes, warnings); `structuredContent` is the normalized result with its `mcpInvocationId`.
 * - `tool_search` and the built-ins answer JSON text: it is their `structuredContent` too.
 * - A failure (refusal, validation, permission, upstream, cancellation): `isError: true`, the JSON body
 *   `{code, message, retryable, attempts, ...}` as text and as `structuredContent`.
 * @param message the tool message
 * @returns the MCP result
 */
export function toCallToolResult(message: ToolMessage): CallToolResult {
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  const structured = isInvocationArtifact(message.artifact)
    ? { mcpInvocationId: message.artifact.invocationId, ...message.artifact.result }
    : jsonObject(text);
  return {
    content: [{ type: "text", text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
    ...(message.status === "error" ? { isError: true } : {}),
  };
}

function isInvocationArtifact(value: unknown): value is InvocationArtifact {
  if (typeof value !== "object" || value === null) return false;
  const { invocationId, result } = value as Partial<InvocationArtifact>;
  return typeof invocationId === "string" && typeof result === "object" && result !== null;
}

/** The text as a JSON object, when it is one (our own tools' replies); else `undefined`. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
