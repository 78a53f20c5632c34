/** Types of the MCP connection layer shared by the server pool and the governance catalog. */
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  LoggingMessageNotificationParams,
} from "@modelcontextprotocol/client";
import type { CallToolResult, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TransportKind } from "../config/index.js";

/** Lifecycle of one server connection. */
export type ServerStatus = "disabled" | "idle" | "connecting" | "connected" | "failed" | "closed";

/**
 * The MCP revision a connection speaks: `2025-11-25` (the `initialize` handshake and a session, or an
 * older revision the server chose) or `2026-07-28` (stateless requests, questions as `input_required`).
 */
export type ProtocolEra = "2025-11-25" | "2026-07-28";

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
  /** The revision the current connection speaks, once connected. */
  era?: ProtocolEra;
  /** The protocol version the server agreed to (e.g. `2025-06-18` for an older server), once connected. */
  protocolVersion?: string;
}

/** Where an upstream server's request came from, for the relay that answers it. */
export interface UpstreamRequestContext {
  /** The configured server id. */
  serverId: string;
  /** The revision it asked in: mid-call (`2025-11-25`) or as an `input_required` result (`2026-07-28`). */
  era: ProtocolEra;
  /** Ends when the tool call ends (it was cancelled, timed out, or the server answered). */
  signal: AbortSignal;
  /**
   * The 1-based number of this question among the questions (elicitations) the server asked during
   * this call, counted across rounds; sampling and roots requests are not counted.
   */
  index: number;
  /**
   * On 2026-07-28, the `input_required` round the question is part of: what a caller that stops here
   * keeps to continue the call later (`PoolCallOptions.continueFrom`).
   */
  round?: InputRound | undefined;
}

/** One `input_required` round of a 2026-07-28 call, as the server returned it. */
export interface InputRound {
  /** The round's embedded requests (`elicitation/create`, `sampling/createMessage`, `roots/list`), by key. */
  inputRequests?: Record<string, unknown> | undefined;
  /** The server's opaque state, echoed byte for byte on the retry. */
  requestState?: string | undefined;
  /** 0 for the answer to the first request, 1 for the next, ... */
  index: number;
}

/**
 * How the caller of one tool call answers what the upstream server asks or tells during that call:
 * the seam through which an executor reaches a human or a model (a LangGraph interrupt card, the
 * gateway's own client). A handler that throws ends the call: the pool cancels the upstream request
 * and the call rejects with the handler's error (see ARCHITECTURE.md "Upstream requests").
 */
export interface UpstreamRelay {
  /**
   * Answers an elicitation (a form, or a URL to visit). Absent: the pool answers `cancel`, since
   * nobody can be asked.
   */
  elicit?: (
    params: ElicitRequestParams,
    context: UpstreamRequestContext,
  ) => Promise<ElicitResult> | ElicitResult;
  /** Answers a sampling request. Absent: the pool's own sampler, if any; else it is refused. */
  sample?: (
    params: CreateMessageRequestParams,
    context: UpstreamRequestContext,
  ) => Promise<CreateMessageResult> | CreateMessageResult;
  /** Receives the log messages the server sends during the call. */
  onLog?: (params: LoggingMessageNotificationParams) => void;
}

/**
 * An `input_required` round of a 2026-07-28 call to continue from, instead of sending the call afresh:
 * the pool answers the round's requests through the relay and retries with the server's
 * `requestState`, so a call resumed in another process goes on where it stopped.
 */
export interface ContinuedRound extends InputRound {
  /** The questions the server asked in the rounds before this one (for `UpstreamRequestContext.index`). */
  questionsBefore: number;
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
  /** Answers the server's elicitation and sampling requests and takes its log messages. @default none */
  relay?: UpstreamRelay | undefined;
  /** A 2026-07-28 round to continue instead of sending the call afresh. @default none */
  continueFrom?: ContinuedRound | undefined;
}

/**
 * The requests of a server's surface beyond tools that the pool forwards as they are (prompts,
 * resources, resource templates, subscriptions, completion, log level).
 */
export type SurfaceMethod =
  | "prompts/list"
  | "prompts/get"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read"
  | "resources/subscribe"
  | "resources/unsubscribe"
  | "completion/complete"
  | "logging/setLevel";

/** Options of one surface request through the pool. */
export interface PoolRequestOptions {
  /** Aborting cancels the request upstream. */
  signal?: AbortSignal | undefined;
  /** Per-request timeout (ms). @default the server's `toolCallTimeoutMs`, else the SDK's 60 s */
  timeoutMs?: number | undefined;
}

/** A notification of a server's surface: list changes and updates of subscribed resources. */
export interface SurfaceNotification {
  method:
    | "notifications/resources/updated"
    | "notifications/resources/list_changed"
    | "notifications/prompts/list_changed";
  params?: Record<string, unknown> | undefined;
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
  /**
   * The capabilities a server declared, connecting it if needed; `undefined` when it cannot be reached.
   * Absent on pools that forward only tools.
   */
  capabilities?(serverId: string): Promise<ServerCapabilities | undefined>;
  /**
   * Sends one request of the server's surface beyond tools and returns its result as the server gave it.
   * Absent on pools that forward only tools.
   */
  request?(
    serverId: string,
    method: SurfaceMethod,
    params: Record<string, unknown>,
    options?: PoolRequestOptions,
  ): Promise<Record<string, unknown>>;
  /** Subscribes to the servers' surface notifications. Absent on pools that forward only tools. */
  onNotification?(listener: (serverId: string, notification: SurfaceNotification) => void): () => void;
  /** Closes every connection; no child process is left and nothing restarts afterwards. */
  close(): Promise<void>;
}
