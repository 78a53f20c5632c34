#!/usr/bin/env node
// A trivial MCP server over stdio for the benchmarks: two read-only tools that answer a short text at
// once, so what a benchmark measures is the client side (the SDK, or Sciencegate's governance), not
// the tool. Plain JavaScript, so that it starts without a TypeScript loader, as a user's server would.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "trivial", version: "1.0.0" });
for (const name of ["lookup", "lookup_cached"]) {
  server.registerTool(
    name,
    {
      description: "Looks up one record by id.",
      inputSchema: { id: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ id }) => ({ content: [{ type: "text", text: JSON.stringify({ id, title: `Record ${id}` }) }] }),
  );
}
await server.connect(new StdioServerTransport());
