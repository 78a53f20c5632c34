/**
 * The app's own MCP server for examples/multi-server-client.ts, over stdio: one read-only `search` tool
 * (its `readOnlyHint` makes the derived manifest treat it as safe, so no approval card is needed).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "lab", version: "1.0.0" });
server.registerTool(
  "search",
  {
    description: "Search the lab notebook.",
    inputSchema: { query: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ query }) => ({ content: [{ type: "text", text: `2 notes mention ${query}` }] }),
);
await server.connect(new StdioServerTransport());
