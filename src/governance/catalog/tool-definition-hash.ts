/** The fingerprint of a live MCP tool definition, used to detect changed tools. */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { hashCanonical } from "../../core/index.js";

/**
 * Hashes what defines a tool's contract: name, description, input and output schemas and
 * annotations. Key order does not matter (canonical JSON); `title`, `icons` and `_meta` are left
 * out because they change presentation, not behaviour. Permission grants and catalog revisions
 * key on this hash, so a server that silently changes a tool invalidates them.
 * @param tool a tool from `tools/list`
 * @returns hex SHA-256
 */
export function toolDefinitionHash(tool: Tool): string {
  return hashCanonical({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  });
}
