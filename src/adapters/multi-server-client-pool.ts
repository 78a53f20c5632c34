/**
 * A `ToolServerPool` over an existing `@langchain/mcp-adapters` `MultiServerMCPClient`: the app keeps
 * its client (and its connection settings), Sciencegate governs the servers through the client's raw
 * SDK clients (`getClient(name)`), never through its LangChain tools.
 *
 * Facts of mcp-adapters 1.1 this works around:
 * - A restarted stdio server gets a new raw client, so a held one breaks: every operation asks
 *   `getClient` again (cheap once connected) and a new instance counts as a reconnect.
 * - Concurrent first connections spawn a server several times: `getClient` calls are serialised.
 * - `close()` is final for us, but `getClient` afterwards would reconnect: a closed pool refuses.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { TransportKind } from "../config/index.js";
import { GovernanceError } from "../core/index.js";
import type { PoolCallOptions, ServerState, ToolServerPool } from "../mcp/index.js";
import { callClientTool, listAllTools, serverUnavailable } from "../mcp/index.js";

/** What the pool needs of a `MultiServerMCPClient` (structural, so mcp-adapters stays optional). */
export interface MultiServerClientLike {
  /**
   * The client's configuration; its `mcpServers` keys are the server ids. A connection's `transport`
   * (or its alias `type`) names its transport; without one, a `command` means stdio.
   */
  readonly config: {
    mcpServers: Record<string, { transport?: unknown; type?: unknown; command?: unknown }>;
    /** `"throw"` (the client's default) or `"ignore"`: what a server that cannot connect does. */
    onConnectionError?: unknown;
    /** Whether a tool that cannot be loaded throws (the client's default: true). */
    throwOnLoadError?: boolean | undefined;
  };
  /** The raw SDK client of a server, connecting every configured server on first use. */
  getClient(serverName: string): Promise<Client | undefined>;
  /** Closes every connection (and stdio child). */
  close(): Promise<void>;
}

const TOOLS_CHANGED = "notifications/tools/list_changed";

interface Entry {
  state: ServerState;
  /** The raw client last seen, to notice a restart (a new instance). */
  client?: Client;
}

/**
 * Adapts a `MultiServerMCPClient` to the pool the governance layer uses.
 * @param client the app's client (not connected yet, or connected)
 * @returns a pool whose `close()` closes the client
 * @example
 * const pool = createMultiServerClientPool(new MultiServerMCPClient({ mcpServers: { mine: { command: "node", args: ["server.js"] } } }));
 */
export function createMultiServerClientPool(client: MultiServerClientLike): ToolServerPool {
  const entries = new Map<string, Entry>();
  for (const [id, connection] of Object.entries(client.config.mcpServers)) {
    entries.set(id, { state: { id, transport: transportOf(connection), status: "idle", starts: 0 } });
  }
  const listeners = new Set<(serverId: string) => void>();
  const emit = (id: string) => {
    for (const listener of listeners) listener(id);
  };
  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const entryOf = (id: string): Entry => {
    const entry = entries.get(id);
    if (entry) return entry;
    throw new GovernanceError(
      "UNKNOWN_ID",
      `Unknown MCP server '${id}'. Known: ${[...entries.keys()].join(", ")}.`,
    );
  };

  const adopt = (id: string, entry: Entry, raw: Client) => {
    if (entry.client === raw) return;
    const isRestart = entry.client !== undefined;
    entry.client = raw;
    entry.state.starts += 1;
    // A stdio transport has a `pid`; the SDK's `Transport` type does not declare it.
    const transport = raw.transport;
    const pid = transport !== undefined && "pid" in transport ? transport.pid : undefined;
    if (typeof pid === "number") entry.state.pid = pid;
    else delete entry.state.pid;
    // Keep a handler the app's client set (its onToolsListChanged hook) working after ours. The SDK
    // has no getter for it: its private handler map is read, and what is found there is checked.
    const handlers: unknown = Reflect.get(raw, "_notificationHandlers");
    const previous: unknown = handlers instanceof Map ? handlers.get(TOOLS_CHANGED) : undefined;
    raw.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
      if (typeof previous === "function") await previous(notification);
      if (entry.client === raw) emit(id);
    });
    // A restarted server may offer other tools than before, as after list_changed.
    if (isRestart) emit(id);
  };

  const clientOf = (id: string): Promise<Client> => {
    const entry = entryOf(id);
    if (closed) return Promise.reject(serverUnavailable(id, "the pool is closed"));
    const attempt = queue.then(async () => {
      if (closed) throw serverUnavailable(id, "the pool is closed");
      if (entry.state.status !== "connected") entry.state.status = "connecting";
      let raw: Client | undefined;
      try {
        raw = await client.getClient(id);
      } catch (cause) {
        throw fail(entry, cause instanceof Error ? cause.message : String(cause), cause);
      }
      if (!raw) throw fail(entry, "the MultiServerMCPClient has no connection to it");
      entry.state.status = "connected";
      delete entry.state.reason;
      adopt(id, entry, raw);
      return raw;
    });
    queue = attempt.catch(() => undefined);
    return attempt;
  };

  return {
    serverIds: () => [...entries.keys()],
    state: (id) => structuredClone(entryOf(id).state),
    async listTools(id: string): Promise<Tool[]> {
      return listAllTools(await clientOf(id), id);
    },
    async callTool(id, name, args, options: PoolCallOptions = {}): Promise<CallToolResult> {
      return callClientTool(await clientOf(id), name, args, options);
    },
    onToolsChanged(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      closed = true;
      // Let a connection in progress finish, so that close() also ends the children it spawned.
      await queue;
      for (const entry of entries.values()) {
        entry.state.status = "closed";
        delete entry.client;
        delete entry.state.pid;
      }
      await client.close();
    },
  };
}

function transportOf(
  connection: MultiServerClientLike["config"]["mcpServers"][string] | undefined,
): TransportKind {
  const kind = connection?.transport ?? connection?.type;
  if (kind === "stdio" || kind === "sse" || kind === "http") return kind;
  return typeof connection?.command === "string" ? "stdio" : "http";
}

function fail(entry: Entry, reason: string, cause?: unknown): GovernanceError {
  entry.state.status = "failed";
  entry.state.reason = reason;
  return serverUnavailable(entry.state.id, reason, cause);
}
