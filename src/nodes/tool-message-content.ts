/**
 * The content of a governed tool message: the result's text (`toolResultText`), then each image,
 * audio or binary resource a server sent as a LangChain standard content block (`image`, `audio`,
 * `file`, base64 with its MIME type), so a multimodal model sees the media itself; a chat model
 * integration that cannot take a block type still has the text, which describes each one.
 */
import type { ContentBlock } from "@langchain/core/messages";
import type { McpToolResult } from "../contract/index.js";
import type { GovernedContentBlock } from "../governance/envelope/index.js";
import { toolResultText } from "./tool-message-text.js";

/**
 * The message content of one governed result.
 * @param invocationId the invocation to cite
 * @param result the normalized result
 * @returns the text alone when the result carries no media; else a text block followed by media blocks
 */
export function toolMessageContent(invocationId: string, result: McpToolResult): string | ContentBlock[] {
  const text = toolResultText(invocationId, result);
  const media = mediaBlocks(result);
  return media.length === 0 ? text : [{ type: "text", text }, ...media];
}

function mediaBlocks(result: McpToolResult): ContentBlock[] {
  const content = result.data?.content;
  if (!Array.isArray(content) || result.records.length > 0) return [];
  const blocks: ContentBlock[] = [];
  for (const block of content as GovernedContentBlock[]) {
    if (block.type === "image" || block.type === "audio") {
      blocks.push({
        type: block.type,
        mimeType: block.mimeType,
        data: block.data,
        metadata: { sha256: block.sha256, bytes: block.bytes },
      });
    } else if (block.type === "resource" && "blob" in block.resource) {
      const { uri, mimeType, blob, sha256, bytes } = block.resource;
      blocks.push({
        type: "file",
        mimeType: mimeType ?? "application/octet-stream",
        data: blob,
        metadata: { uri, sha256, bytes },
      });
    }
  }
  return blocks;
}
