/** An in-process MCP server over local function tools, so they reach the broker like any MCP tool. */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { isGovernanceError, PACKAGE_VERSION } from "../../core/index.js";
import type { LocalTool } from "./local-tool.js";

/**
 * Starts an MCP server serving `tools` and returns the client end of an in-memory link to it.
 * A function's return value becomes `structuredContent.result` (and JSON text); a throw becomes an
 * `isError` result whose text is `<ErrorName>: <message>`, which the broker reports and records as
 * `TOOL_FAILED`. A tool that cannot be run at all (the Python bridge does not start: `UPSTREAM_UNAVAILABLE`)
 * fails the request itself, so the broker reports `UPSTREAM_UNAVAILABLE`.
 * @param providerId the `[tools.<provider>]` key, used as the server name
 * @param tools the provider's functions
 * @returns the client-side transport (unstarted), for the server pool's `createTransport`
 */
export async function createLocalToolTransport(providerId: string, tools: LocalTool[]): Promise<Transport> {
  const server = new Server(
    { name: `sciencegate-local-${providerId}`, version: PACKAGE_VERSION },
    { capabilities: { tools: {} } },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    // The project's own functions, not a third-party server: they need no approval card per call.
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { readOnlyHint: true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool)
      return failure(`LookupError: no local tool '${request.params.name}' in provider '${providerId}'`);
    try {
      const value = (await tool.run(request.params.arguments ?? {})) ?? null;
      return {
        content: [{ type: "text", text: JSON.stringify(value) }],
        structuredContent: { result: value },
      };
    } catch (error) {
      // Not the function's failure: it never ran. A JSON-RPC error says so to the broker.
      if (isGovernanceError(error) && error.code === "UPSTREAM_UNAVAILABLE") throw error;
      const message =
        error instanceof Error
          ? error.name === "Error" && /^\w+(Error|Exception): /.test(error.message)
            ? error.message
            : `${error.name}: ${error.message}`
          : String(error);
      return failure(message);
    }
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return clientSide;
}

function failure(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}
