/** Normalized configuration types shared by the config loader and the server pool. */

/** How Sciencegate talks to an MCP server. `http` is streamable HTTP. */
export type TransportKind = "stdio" | "sse" | "http";

/** Keyword routing of a server or one of its tools. */
export interface RoutingConfig {
  /** Words that, found in a user message, auto-promote the tool. */
  keywords: string[];
  /** `prefer` enables keyword auto-promotion; `off` disables it. */
  mode: "prefer" | "off";
  /** 0–100; higher wins when more than three tools match. Out-of-range values are clamped. */
  priority: number;
}

/** One MCP server, after env substitution and validation. */
export interface ServerConfig {
  /** The key of the server in `mcpServers`. */
  id: string;
  transport: TransportKind;
  /** stdio: the executable. */
  command?: string;
  /** stdio: its arguments. */
  args: string[];
  /** stdio: working directory. */
  cwd?: string;
  /** stdio: extra environment variables for the child process. */
  env: Record<string, string>;
  /** sse/http: the endpoint URL. */
  url?: string;
  /** sse/http: request headers (after `$VAR` substitution). */
  headers: Record<string, string>;
  description?: string;
  /** Only a literal `enabled: false` in the file disables a server. */
  enabled: boolean;
  /** `tool_call_timeout` in the file is seconds; this is milliseconds. */
  toolCallTimeoutMs?: number;
  routing?: RoutingConfig;
  /**
   * `gateway_tool_names` in the file: how the gateway names this server's tools to its clients,
   * `upstream` (the server's own names, where no other tool of the session has that name) or
   * `qualified` (`mcp__<server>__<tool>`). Absent: the gateway's own setting.
   */
  gatewayToolNames?: "qualified" | "upstream";
  /** Per-tool overrides keyed by the MCP tool name. */
  tools: Record<string, { routing?: RoutingConfig }>;
}

/** The parsed `extensions_config.json` (or `MultiServerMCPClient` config). */
export interface ExtensionsConfig {
  /** The file it came from, when it came from a file. */
  path?: string;
  servers: ServerConfig[];
  /**
   * `throwOnLoadError` of the file (the `MultiServerMCPClient` key): `true` makes a server that cannot
   * start fail `createGovernance` (`GovernanceOptions.failOnServerError`). Absent when the file omits it.
   */
  throwOnLoadError?: boolean | undefined;
}
