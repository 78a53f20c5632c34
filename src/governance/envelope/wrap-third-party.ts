import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * Third-party content as text-only data: binary blocks are described, never passed on.
 * @param result a tool result without a structured envelope
 * @returns `{content}` of text blocks, plus the result's `structuredContent` when it has one
 */
export function wrapThirdParty(result: CallToolResult): Record<string, unknown> {
  const content = result.content.map((block) => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text };
      case "image":
      case "audio":
        return {
          type: "text",
          text: `[${block.type} omitted: ${block.mimeType}, ${block.data.length} base64 chars]`,
        };
      case "resource_link":
        return { type: "text", text: `[resource link: ${block.name} ${block.uri}]` };
      case "resource":
        return "text" in block.resource
          ? { type: "text", text: block.resource.text }
          : { type: "text", text: `[embedded resource omitted: ${block.resource.uri}]` };
      default:
        return { type: "text", text: "[unsupported content block omitted]" };
    }
  });
  const data: Record<string, unknown> = { content };
  if (result.structuredContent !== undefined) data.structuredContent = result.structuredContent;
  return data;
}
