/**
 * A `ToolServerPool` over in-process MCP servers, for tests and examples: each server is a real SDK
 * `McpServer` linked to a real SDK `Client` by `InMemoryTransport`, so listing, paging, calls,
 * cancellation and `tools/list_changed` run through the actual protocol code.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { GovernanceError } from "../core/index.js";
import type { PoolCallOptions, ServerState, ToolServerPool } from "../mcp/index.js";
import { callClientTool, listAllTools, serverUnavailable } from "../mcp/index.js";

/** Options of `createInMemoryPool`. */
export interface InMemoryPoolOptions {
  /** Server ids that are configured but disabled (as `enabled: false` in the config file). */
  disabled?: readonly string[];
}

/** A server instance, or a factory called on every (re)connect; a factory that throws fails the connect. */
export type InMemoryServerSource = McpServer | (() => McpServer);

interface Entry {
  source: InMemoryServerSource;
  state: ServerState;
  client?: Client;
  connecting?: Promise<Client>;
}

/**
 * Creates a pool over in-process servers. Connections are lazy and single-flight; a server whose
 * connection failed or closed is reconnected on next use, which notifies `onToolsChanged` listeners.
 * @param servers server id -> `McpServer` (or a factory of one), in config order
 * @param options which servers count as disabled
 * @returns a `ToolServerPool`
 * @example
 * const pool = createInMemoryPool({ demo: () => makeDemoServer() });
 * const tools = await pool.listTools("demo");
 */
export function createInMemoryPool(
  servers: Record<string, InMemoryServerSource>,
  options: InMemoryPoolOptions = {},
): ToolServerPool {
  const disabled = new Set(options.disabled ?? []);
  const entries = new Map<string, Entry>();
  for (const [id, source] of Object.entries(servers)) {
    const status = disabled.has(id) ? "disabled" : "idle";
    const state: ServerState = { id, transport: "stdio", status, starts: 0 };
    if (status === "disabled") state.reason = `server '${id}' is disabled in the configuration`;
    entries.set(id, { source, state });
  }
  const listeners = new Set<(serverId: string) => void>();
  let closed = false;

  const entryOf = (id: string): Entry => {
    const entry = entries.get(id);
    if (entry) return entry;
    throw new GovernanceError(
      "UNKNOWN_ID",
      `Unknown MCP server '${id}'. Known: ${[...entries.keys()].join(", ")}.`,
    );
  };

  const connect = async (id: string, entry: Entry): Promise<Client> => {
    const client = new Client({ name: "sciencegate-in-memory-pool", version: "0" });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      for (const listener of listeners) listener(id);
    });
    client.onclose = () => {
      if (entry.client !== client) return;
      delete entry.client;
      if (entry.state.status === "connected") entry.state.status = "idle";
    };
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = typeof entry.source === "function" ? entry.source() : entry.source;
    await server.connect(serverSide);
    await client.connect(clientSide);
    return client;
  };

  const clientOf = (id: string): Promise<Client> => {
    const entry = entryOf(id);
    if (closed) return Promise.reject(serverUnavailable(id, "the pool is closed"));
    if (entry.state.status === "disabled") {
      const message = `MCP server '${id}' is disabled in the configuration.`;
      return Promise.reject(new GovernanceError("SOURCE_DISABLED", message, { data: { serverId: id } }));
    }
    if (entry.client) return Promise.resolve(entry.client);
    entry.connecting ??= (async () => {
      entry.state.status = "connecting";
      entry.state.starts += 1;
      try {
        const client = await connect(id, entry);
        entry.client = client;
        entry.state.status = "connected";
        delete entry.state.reason;
        // A reconnected server may offer other tools than before, as after list_changed.
        if (entry.state.starts > 1) for (const listener of listeners) listener(id);
        return client;
      } catch (cause) {
        entry.state.status = "failed";
        entry.state.reason = cause instanceof Error ? cause.message : String(cause);
        throw serverUnavailable(id, entry.state.reason, cause);
      } finally {
        delete entry.connecting;
      }
    })();
    return entry.connecting;
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
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          const client = entry.client;
          delete entry.client;
          if (entry.state.status !== "disabled") entry.state.status = "closed";
          await client?.close();
        }),
      );
    },
  };
}
