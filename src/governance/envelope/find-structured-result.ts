import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * The structured result a tool returned: an object with a `records` array, in `structuredContent` or
 * as JSON in a text block.
 * @param result the tool result as the MCP client returned it
 * @returns the object, still unvalidated, or undefined for a third-party result (plain text, no records)
 */
export function findStructuredResult(result: CallToolResult): Record<string, unknown> | undefined {
  if (hasRecordsArray(result.structuredContent)) return result.structuredContent;
  for (const block of result.content) {
    if (block.type !== "text" || !block.text.trimStart().startsWith("{")) continue;
    try {
      const parsed: unknown = JSON.parse(block.text);
      if (hasRecordsArray(parsed)) return parsed;
    } catch {
      // Not JSON: plain text from a third-party server.
    }
  }
  return undefined;
}

function hasRecordsArray(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Array.isArray((value as { records?: unknown }).records)
  );
}
