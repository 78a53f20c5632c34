/** Types of the MCP connection layer shared by the server pool and the governance catalog. */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TransportKind } from "../config/index.js";

/** Lifecycle of one server connection. */
export type ServerStatus = "disabled" | "idle" | "connecting" | "connected" | "failed" | "closed";

/** What the pool knows about one server, for catalogs and `sciencegate tools`. */
export interface ServerState {
  id: string;
  transport: TransportKind;
  status: ServerStatus;
  /** Why the server is failed/disabled/closed. */
  reason?: string;
  /** The last lines a stdio server wrote to stderr (kept for error messages). */
  stderrTail?: string[];
  /** The child's pid while a stdio server runs. */
  pid?: number;
  /** How many times the server was (re)started. */
  starts: number;
}

/** Options of one tool call through the pool. */
export interface PoolCallOptions {
  /** Per-request timeout handed to the SDK (ms). */
  timeoutMs?: number;
  /** Aborting sends `notifications/cancelled` and rejects the call. */
  signal?: AbortSignal;
  /** Called with each `notifications/progress` of this request. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * The source's response cap in bytes (`governance.maxResponseBytes`). Over streamable HTTP, an answer
   * is read only while one message of it stays within about four times this (JSON escaping) plus 1 MiB;
   * past that the call fails with `RESPONSE_TOO_LARGE` without reading the rest. Over stdio the SDK's
   * 10 MiB read buffer is the limit. The exact check against the cap is the broker's.
   * @default undefined: answers are read in full
   */
  maxResponseBytes?: number | undefined;
}

/** The part of the server pool that the governance layer depends on. */
export interface ToolServerPool {
  /** Ids of every configured server, enabled or not, in config order. */
  serverIds(): string[];
  /** The current state of one server. */
  state(serverId: string): ServerState;
  /** Every tool of the server, following `nextCursor` through all pages. Connects lazily. */
  listTools(serverId: string): Promise<Tool[]>;
  /** Calls one tool. Connects lazily; restarts a dead stdio server. */
  callTool(
    serverId: string,
    name: string,
    args: Record<string, unknown>,
    options?: PoolCallOptions,
  ): Promise<CallToolResult>;
  /** Subscribes to tool-list changes (`notifications/tools/list_changed` and reconnects). */
  onToolsChanged(listener: (serverId: string) => void): () => void;
  /** Closes every connection; no child process is left and nothing restarts afterwards. */
  close(): Promise<void>;
}
