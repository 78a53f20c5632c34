/**
 * A governed tool message as an MCP `CallToolResult`. A result with records or candidates (a
 * Sciencegate source) is the text the model reads (the same compact text every executor gives a model,
 * citations included) with the structured result for code. A third-party server's result is passed
 * through block by block as the envelope governed it (text made inert, media and blobs checked and
 * hashed, links and embedded resources kept; see `governContentBlocks`), with its `structuredContent`,
 * so an MCP client gets what the server sent, governed. Every failure is `isError` with the governance
 * error body.
 */
import type { ToolMessage } from "@langchain/core/messages";
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolResult } from "../contract/index.js";
import type { GovernedContentBlock } from "../governance/envelope/index.js";
import { inertText } from "../nodes/index.js";

/** The `InvokeOutcome` fields a governed MCP call's message carries as its artifact. */
interface InvocationArtifact {
  invocationId: string;
  result: McpToolResult;
}

/** The `_meta` key naming the ledger invocation of a passed-through result. */
export const INVOCATION_META_KEY = "io.github.sciencegate/invocation";

/**
 * Maps the message of `executeGovernedToolCall` to the MCP result.
 * - A third-party result (no records, the server's own `content`): its governed blocks in order, a
 *   `warning:` text block when the envelope dropped or changed something, its `structuredContent`, and
 *   `_meta[INVOCATION_META_KEY]` with the `mcpInvocationId`, source, tool and `untrusted: true`.
 * - Any other governed MCP call: `content` is the compact result text (`mcpInvocationId`, citation
 *   labels, content scopes, warnings); `structuredContent` is the normalized result with its `mcpInvocationId`.
 * - `tool_search` and the built-ins answer JSON text: it is their `structuredContent` too.
 * - A failure (refusal, validation, permission, upstream, cancellation): `isError: true`, the JSON body
 *   `{code, message, retryable, attempts, ...}` as text and as `structuredContent`.
 * @param message the tool message
 * @returns the MCP result
 */
export function toCallToolResult(message: ToolMessage): CallToolResult {
  if (message.status !== "error" && isInvocationArtifact(message.artifact)) {
    const passed = passThrough(message.artifact);
    if (passed) return passed;
  }
  const text = messageText(message);
  const structured = isInvocationArtifact(message.artifact)
    ? { mcpInvocationId: message.artifact.invocationId, ...message.artifact.result }
    : jsonObject(text);
  return {
    content: [{ type: "text", text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
    ...(message.status === "error" ? { isError: true } : {}),
  };
}

/** The governed blocks of a third-party result as MCP content, or `undefined` for any other result. */
function passThrough({ invocationId, result }: InvocationArtifact): CallToolResult | undefined {
  const data = result.data;
  if (result.records.length > 0 || (result.artifacts?.length ?? 0) > 0) return undefined;
  if (data === undefined || !Array.isArray(data.content)) return undefined;
  if (Object.keys(data).some((key) => key !== "content" && key !== "structuredContent")) return undefined;
  const content = (data.content as GovernedContentBlock[]).map(toMcpBlock);
  if (result.warnings.length > 0) {
    content.push({ type: "text", text: inertText(result.warnings.map((w) => `warning: ${w}`).join("\n")) });
  }
  const structured = data.structuredContent;
  return {
    content,
    ...(isObject(structured) ? { structuredContent: structured } : {}),
    _meta: {
      [INVOCATION_META_KEY]: {
        mcpInvocationId: invocationId,
        sourceId: result.sourceId,
        toolId: result.toolId,
        untrusted: true,
      },
    },
  };
}

/** A governed block as MCP content: only the fields MCP defines (size and digest stay in the ledger). */
function toMcpBlock(block: GovernedContentBlock): ContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: inertText(block.text) };
    case "image":
    case "audio":
      return { type: block.type, mimeType: block.mimeType, data: block.data };
    case "resource_link": {
      const { type: _type, ...link } = block;
      return { type: "resource_link", ...link };
    }
    case "resource": {
      const resource = block.resource;
      const mime = resource.mimeType === undefined ? {} : { mimeType: resource.mimeType };
      return "text" in resource
        ? { type: "resource", resource: { uri: resource.uri, ...mime, text: inertText(resource.text) } }
        : { type: "resource", resource: { uri: resource.uri, ...mime, blob: resource.blob } };
    }
  }
}

function messageText(message: ToolMessage): string {
  if (typeof message.content === "string") return message.content;
  const first = message.content[0];
  // A message with media starts with its text block (`toolMessageContent`).
  return first !== undefined && first.type === "text" && typeof first.text === "string"
    ? first.text
    : JSON.stringify(message.content);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
