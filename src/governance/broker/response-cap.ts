/** The response size cap of DESIGN.md §4, applied before a result is parsed or normalized. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GovernanceError } from "../../core/index.js";

/**
 * The UTF-8 size of what a tool result carries: every text, base64 payload and embedded resource of its
 * content blocks, plus the JSON of `structuredContent`. `_meta` is not counted.
 * @param result a tool result as the MCP client returned it
 * @returns the size in bytes
 */
export function measureResultBytes(result: CallToolResult): number {
  let bytes = 0;
  for (const block of result.content) {
    switch (block.type) {
      case "text":
        bytes += Buffer.byteLength(block.text, "utf8");
        break;
      case "image":
      case "audio":
        bytes += Buffer.byteLength(block.data, "utf8");
        break;
      case "resource":
        bytes += Buffer.byteLength(
          "text" in block.resource ? block.resource.text : block.resource.blob,
          "utf8",
        );
        break;
      default:
        // resource_link carries only a URI and names; they are small by construction.
        break;
    }
  }
  if (result.structuredContent !== undefined) {
    bytes += Buffer.byteLength(JSON.stringify(result.structuredContent), "utf8");
  }
  return bytes;
}

/**
 * Rejects a result above the source's `maxResponseBytes` before anything parses it.
 * @param result a tool result as the MCP client returned it
 * @param maxBytes the source's cap (`governance.maxResponseBytes` of its manifest)
 * @throws {GovernanceError} `RESPONSE_TOO_LARGE` (not retryable) with `data: {bytes, maxBytes}`
 */
export function assertWithinCap(result: CallToolResult, maxBytes: number): void {
  const bytes = measureResultBytes(result);
  if (bytes > maxBytes) {
    throw new GovernanceError(
      "RESPONSE_TOO_LARGE",
      `The response has ${bytes} bytes, more than the source's cap of ${maxBytes} bytes.`,
      { retryable: false, data: { bytes, maxBytes } },
    );
  }
}
