/**
 * The bundled `sciencegate-sources` MCP server: registers every source module's tools as
 * `<sourceId>_<toolId>` and turns their outputs into `McpToolResult`s (structured content plus the same JSON
 * as text), and their `ProviderError`s into structured error results.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolResult } from "../../contract/index.js";
import { type Clock, GovernanceError, PACKAGE_VERSION, systemClock } from "../../core/index.js";
import type { SourceEnv } from "./provider-env.js";
import { isProviderError } from "./provider-error.js";
import { ProviderHttp, type ProviderHttpOptions } from "./provider-http.js";
import type { AnySourceTool, SourceModule } from "./source-module.js";
import { SOURCE_MODULES } from "./source-modules.js";

/** The MCP server id the manifests name in `transport.mcpServerId`. */
export const SOURCES_SERVER_ID = "sciencegate-sources";

/** Options of `createSourcesServer`. */
export interface SourcesServerOptions {
  /** Serve only these source ids. @default every registered source */
  only?: readonly string[];
  /** Base URL overrides, NCBI identification, timeouts (see ./provider-env.ts). @default process.env */
  env?: SourceEnv;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** @default systemClock */
  clock?: Clock;
  /** Per-request provider timeout. @default SCIENCEGATE_HTTP_TIMEOUT_MS or 20000 */
  timeoutMs?: number;
  /** Per-response size cap. @default SCIENCEGATE_MAX_RESPONSE_BYTES or 5 MiB */
  maxResponseBytes?: number;
  /** The source modules to choose from (tests). @default SOURCE_MODULES */
  modules?: readonly SourceModule[];
}

/**
 * The MCP tool name of a source tool.
 * @param sourceId the source id (`pubmed`)
 * @param toolId the tool id (`search`)
 * @returns `<sourceId>_<toolId>` with characters outside `[A-Za-z0-9_-]` replaced by `_`
 */
export function sourceToolName(sourceId: string, toolId: string): string {
  return `${sourceId}_${toolId}`.replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * Creates the sources MCP server (not yet connected).
 * @param options sources to serve, environment, fetch and clock seams
 * @returns the server, ready for `connect(transport)`
 * @throws GovernanceError `UNKNOWN_ID` when `only` names an unknown source; `INVALID_CONFIG` when a base-URL
 *   or numeric environment variable is invalid
 */
export function createSourcesServer(options: SourcesServerOptions = {}): McpServer {
  const env = options.env ?? process.env;
  const modules = selectModules(options.modules ?? SOURCE_MODULES, options.only);
  const clock = options.clock ?? systemClock;
  const httpOptions: ProviderHttpOptions = { clock, env };
  if (options.fetch) httpOptions.fetch = options.fetch;
  const timeoutMs = options.timeoutMs ?? positiveEnv(env, "SCIENCEGATE_HTTP_TIMEOUT_MS");
  if (timeoutMs !== undefined) httpOptions.timeoutMs = timeoutMs;
  const maxResponseBytes = options.maxResponseBytes ?? positiveEnv(env, "SCIENCEGATE_MAX_RESPONSE_BYTES");
  if (maxResponseBytes !== undefined) httpOptions.maxResponseBytes = maxResponseBytes;
  const http = new ProviderHttp(httpOptions);
  const server = new McpServer(
    { name: SOURCES_SERVER_ID, version: PACKAGE_VERSION },
    { capabilities: { tools: {} } },
  );
  for (const source of modules) {
    http.baseUrlsOf(source); // Misconfigured base URLs fail at start, not at the first call.
    for (const tool of source.tools) {
      server.registerTool(
        sourceToolName(source.id, tool.id),
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputShape,
          annotations: { title: tool.title, readOnlyHint: true, openWorldHint: true },
        },
        (input, extra) => runTool(source, tool, input, { http: http.forSource(source, extra.signal), clock }),
      );
    }
  }
  return server;
}

/**
 * Runs the sources server on stdin/stdout until the transport closes.
 * @param options as for `createSourcesServer`
 * @returns the connected server
 * @throws GovernanceError as `createSourcesServer`
 */
export async function runSourcesServerStdio(options: SourcesServerOptions = {}): Promise<McpServer> {
  const server = createSourcesServer(options);
  await server.connect(new StdioServerTransport());
  return server;
}

async function runTool(
  source: SourceModule,
  tool: AnySourceTool,
  input: unknown,
  seams: { http: ReturnType<ProviderHttp["forSource"]>; clock: Clock },
): Promise<CallToolResult> {
  try {
    const output = await tool.run(input as never, { http: seams.http, now: () => seams.clock.now() });
    const result: McpToolResult = {
      records: output.records,
      warnings: output.warnings ?? [],
      attribution: source.attribution,
      license: source.license,
      retrievedAt: new Date(seams.clock.now()).toISOString(),
      sourceId: source.id,
      toolId: tool.id,
      untrusted: true,
    };
    if (output.artifacts) result.artifacts = output.artifacts;
    if (output.data) result.data = output.data;
    const structured = result as unknown as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: structured };
  } catch (error) {
    if (isProviderError(error)) return error.toToolResult();
    // A bug, not a provider failure: no structured error, so the broker treats it as final. The message
    // names only the error class, never input text.
    const name = error instanceof Error ? error.name : typeof error;
    return {
      isError: true,
      content: [{ type: "text", text: `Internal error in ${sourceToolName(source.id, tool.id)} (${name}).` }],
    };
  }
}

function selectModules(
  modules: readonly SourceModule[],
  only: readonly string[] | undefined,
): SourceModule[] {
  if (only === undefined) return [...modules];
  const known = new Set(modules.map((m) => m.id));
  const unknown = only.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new GovernanceError(
      "UNKNOWN_ID",
      `Unknown source id(s) ${unknown.join(", ")}; known: ${[...known].join(", ")}.`,
    );
  }
  return modules.filter((m) => only.includes(m.id));
}

function positiveEnv(env: SourceEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `Environment variable ${name} must be a positive integer; got '${raw}'.`,
    );
  }
  return value;
}
