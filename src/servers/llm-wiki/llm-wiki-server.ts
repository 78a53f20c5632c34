/**
 * The bundled `llm-wiki` MCP server (`sciencegate serve llm-wiki`): read-only access to any LLM Wiki
 * knowledge base over its HTTP interface, as `McpToolResult`s with structured errors.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolResult } from "../../contract/index.js";
import { type Clock, PACKAGE_VERSION, systemClock } from "../../core/index.js";
import { isProviderError } from "../sources/provider-error.js";
import { WikiHttp } from "./wiki-http.js";
import { LLM_WIKI_TOKEN_ENV, LLM_WIKI_URL_ENV, parseWikiOrigin } from "./wiki-origin.js";
import { LLM_WIKI_SOURCE_ID } from "./wiki-records.js";
import { WIKI_TOOLS, type WikiTool } from "./wiki-tools.js";

/** The MCP server id of the bridge (`mcpServers.llm-wiki` and the manifest's `transport.mcpServerId`). */
export const LLM_WIKI_SERVER_ID = "llm-wiki";

/** Attribution and licence the bridge reports (the manifest's `governance` values). */
const ATTRIBUTION = "LLM Wiki knowledge base (configured by the deployment)";
const LICENSE = "Private knowledge base; terms set by its operator";

/** Options of `createLlmWikiServer`. */
export interface LlmWikiServerOptions {
  /** Reads `SCIENCE_AGENT_LLM_WIKI_URL` and `SCIENCE_AGENT_LLM_WIKI_TOKEN`. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** @default systemClock */
  clock?: Clock;
  /** Per-request timeout. @default 20000 */
  timeoutMs?: number;
  /** Per-response size cap. @default 5 MiB */
  maxResponseBytes?: number;
}

/**
 * Creates the bridge server (not yet connected).
 * @param options environment, fetch and clock seams
 * @returns the server, ready for `connect(transport)`
 * @throws GovernanceError `INVALID_CONFIG` when `SCIENCE_AGENT_LLM_WIKI_URL` is not an http(s) origin
 *   (for example when it has a path such as `/api/v1`)
 * @example
 * const server = createLlmWikiServer({ env: { SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:8100" } });
 */
export function createLlmWikiServer(options: LlmWikiServerOptions = {}): McpServer {
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock;
  const http = new WikiHttp({
    origin: parseWikiOrigin(env[LLM_WIKI_URL_ENV]),
    token: env[LLM_WIKI_TOKEN_ENV],
    clock,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
  });
  const server = new McpServer(
    { name: LLM_WIKI_SERVER_ID, version: PACKAGE_VERSION },
    { capabilities: { tools: {} } },
  );
  for (const tool of WIKI_TOOLS) {
    server.registerTool(
      tool.id,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputShape,
        annotations: { title: tool.title, readOnlyHint: true, openWorldHint: true },
      },
      (input, extra) => runTool(tool, input, http, clock, extra.signal),
    );
  }
  return server;
}

/**
 * Runs the bridge on stdin/stdout until the transport closes.
 * @param options as for `createLlmWikiServer`
 * @returns the connected server
 * @throws GovernanceError as `createLlmWikiServer`
 */
export async function runLlmWikiServerStdio(options: LlmWikiServerOptions = {}): Promise<McpServer> {
  const server = createLlmWikiServer(options);
  await server.connect(new StdioServerTransport());
  return server;
}

async function runTool(
  tool: WikiTool,
  input: unknown,
  http: WikiHttp,
  clock: Clock,
  signal: AbortSignal,
): Promise<CallToolResult> {
  try {
    const output = await tool.run(input as never, http, signal);
    const result: McpToolResult = {
      records: output.records,
      warnings: output.warnings,
      attribution: ATTRIBUTION,
      license: LICENSE,
      retrievedAt: new Date(clock.now()).toISOString(),
      sourceId: LLM_WIKI_SOURCE_ID,
      toolId: tool.id,
      untrusted: true,
    };
    if (output.data) result.data = output.data;
    const structured = result as unknown as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: structured };
  } catch (error) {
    if (isProviderError(error)) return error.toToolResult();
    const name = error instanceof Error ? error.name : typeof error;
    return {
      isError: true,
      content: [{ type: "text", text: `Internal error in llm-wiki ${tool.id} (${name}).` }],
    };
  }
}
