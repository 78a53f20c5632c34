/** One live connection of the pool: an SDK `Client` over one transport (and, for stdio, one child). */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type Implementation,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../core/index.js";
import { GovernanceError } from "../core/index.js";
import { callClientTool } from "./client-calls.js";
import { readBufferLimitOf } from "./connection-failure.js";
import { descendantPids, isProcessAlive } from "./process-tree.js";
import { raceWithClock } from "./race-with-clock.js";
import type { StderrTail } from "./stderr-tail.js";
import { childPidOf, holdTransport, stderrOf } from "./transports.js";
import type { PoolCallOptions } from "./types.js";

/** How long to wait for the last stderr lines of a child that has exited. */
const STDERR_SETTLE_MS = 200;

/** Options of a {@link ServerConnection}. */
export interface ServerConnectionOptions {
  clientInfo: Implementation;
  clock: Clock;
  /** Grace between SIGTERM and SIGKILL, and after SIGKILL, when reaping a child. */
  killGraceMs: number;
  /** Receives the stderr of a stdio child. */
  tail?: StderrTail;
  /** The server sent `notifications/tools/list_changed`. */
  onToolsChanged: () => void;
  /** The transport closed on its own (child exited, peer went away) while the connection was open. */
  onLost: () => void;
}

/**
 * One connection: creates the `Client`, caches the paginated tool list until `list_changed`, notices when
 * the transport closes, and on shutdown makes sure the child process is gone.
 * Used by `ServerPool`; not part of the public API.
 */
export class ServerConnection {
  /** The SDK client of this connection. */
  readonly client: Client;
  readonly #transport: Transport;
  /** Whether answers arrive over streamable HTTP (through the capped fetch, see `withResponseCap`). */
  readonly #readsOverHttp: boolean;
  readonly #options: ServerConnectionOptions;
  readonly #transportClosed: Promise<void>;
  readonly #stderrDone: Promise<void> | undefined;
  #isTransportClosed = false;
  #isOpen = false;
  #overflowLimit: number | undefined;
  #pid: number | undefined;
  #tools: Promise<Tool[]> | undefined;
  #shutdown: Promise<void> | undefined;

  /**
   * @param transport an unstarted transport (ownership passes to the connection)
   * @param options callbacks, clock and stderr tail
   */
  constructor(transport: Transport, options: ServerConnectionOptions) {
    this.#transport = transport;
    this.#readsOverHttp = transport instanceof StreamableHTTPClientTransport;
    this.#options = options;
    this.client = new Client(options.clientInfo, { capabilities: {} });
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#invalidateTools();
      options.onToolsChanged();
    });
    const stderr = stderrOf(transport);
    this.#stderrDone = stderr && options.tail ? options.tail.follow(stderr) : undefined;
    let markClosed = () => {};
    this.#transportClosed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    // The SDK's Protocol keeps a handler set before connect() and calls it first; for stdio it fires on the
    // child's "close" event, i.e. after the process has exited and been reaped.
    transport.onclose = () => {
      this.#isTransportClosed = true;
      markClosed();
      if (this.#isOpen) {
        this.#isOpen = false;
        this.#invalidateTools();
        options.onLost();
      }
    };
    // Kept like onclose: the SDK reports a message over its stdio read buffer here, then closes.
    transport.onerror = (error) => {
      const limit = readBufferLimitOf(error);
      if (limit === undefined || this.#overflowLimit !== undefined) return;
      this.#overflowLimit = limit;
      // The SDK's close ends stdin and waits, but goes on reading the rest of the message until the
      // child exits; a child blocked writing it would push all of it through the buffer first.
      if (this.#pid !== undefined) {
        try {
          process.kill(this.#pid, "SIGTERM");
        } catch {
          // ESRCH: it exited meanwhile
        }
      }
    };
    // The pid must be known before Client.connect() can fail: on failure the SDK forgets its child at once.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.#pid = childPidOf(transport);
    };
  }

  /** Whether the connection is initialized and its transport has not closed. */
  get isOpen(): boolean {
    return this.#isOpen;
  }

  /**
   * The limit in bytes of the stdio read buffer when a message from the child crossed it, which made
   * the SDK close the connection; undefined otherwise.
   */
  get overflowLimit(): number | undefined {
    return this.#overflowLimit;
  }

  /** The pid of the stdio child while it runs. */
  get pid(): number | undefined {
    return this.#isTransportClosed ? undefined : (childPidOf(this.#transport) ?? this.#pid);
  }

  /**
   * Starts the transport and runs the MCP handshake.
   * @param timeoutMs deadline for start plus `initialize`, on the injected clock
   * @param signal aborts the attempt (the pool is closing)
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` on timeout or abort; the SDK's error when it fails
   */
  async connect(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const connecting = this.#held(() => this.client.connect(this.#transport, { timeout: timeoutMs }));
    const outcome = await raceWithClock(connecting, this.#options.clock, timeoutMs, signal);
    if (outcome.kind === "timeout") {
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", `did not finish connecting within ${timeoutMs} ms`, {
        retryable: true,
      });
    }
    if (outcome.kind === "aborted") throw new GovernanceError("UPSTREAM_UNAVAILABLE", "pool is closed");
    if (this.#isTransportClosed)
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", "connection closed", { retryable: true });
    this.#isOpen = true;
  }

  /**
   * Every tool of the server, following `nextCursor`; cached until `list_changed` or the connection ends.
   * Concurrent callers share one listing.
   * @returns the tools in server order
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the server repeats a cursor; SDK errors unchanged
   */
  listTools(): Promise<Tool[]> {
    if (this.#tools) return this.#tools;
    const listing = this.#held(() => this.#fetchAllTools());
    this.#tools = listing;
    // A failed listing must not stay cached; list_changed clears the cache through #invalidateTools.
    listing.catch(() => {
      if (this.#tools === listing) this.#tools = undefined;
    });
    return listing;
  }

  /**
   * Calls one tool through the SDK, handing it timeout, signal and progress callback.
   * @param name the MCP tool name
   * @param args the tool arguments
   * @param options per-call options
   * @returns the SDK's result (`isError` results included)
   * @throws the SDK's errors unchanged (`McpError` -32001 on timeout or abort)
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: PoolCallOptions,
  ): Promise<CallToolResult> {
    // Only the HTTP transports read answers through the capped fetch; elsewhere the cap's async
    // context would be pure cost (stdio has its own message limit).
    if (!this.#readsOverHttp && options.maxResponseBytes !== undefined) {
      const { maxResponseBytes: _unused, ...rest } = options;
      return this.#held(() => callClientTool(this.client, name, args, rest));
    }
    return this.#held(() => callClientTool(this.client, name, args, options));
  }

  /** Lets the last stderr lines of an exited child arrive before an error message quotes them. */
  async settleStderr(): Promise<void> {
    if (this.#stderrDone && this.#isTransportClosed) {
      await raceWithClock(this.#stderrDone, this.#options.clock, STDERR_SETTLE_MS);
    }
  }

  /**
   * Closes the client and transport and waits until the child process is gone: the SDK ends stdin, then
   * sends SIGTERM and SIGKILL; a child still alive afterwards is signalled here. Idempotent.
   * @returns a promise that resolves once nothing of this connection is left running
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#held(() => this.#doShutdown());
    return this.#shutdown;
  }

  /**
   * Runs `work` with the stdio child counted as the process's work: between requests an idle child
   * does not keep the app's process alive (see `StdioChildTransport`).
   */
  async #held<T>(work: () => Promise<T>): Promise<T> {
    const release = holdTransport(this.#transport);
    try {
      return await work();
    } finally {
      release();
    }
  }

  async #doShutdown(): Promise<void> {
    this.#isOpen = false;
    this.#invalidateTools();
    const pid = this.#pid;
    // Taken before closing: once the direct child exits, its own children are re-parented to init.
    const descendants = pid === undefined || this.#isTransportClosed ? [] : descendantPids(pid);
    await this.client.close().catch(() => undefined);
    if (pid !== undefined) await this.#reap(pid);
    await this.#reapDescendants(descendants);
  }

  async #reap(pid: number): Promise<void> {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (this.#isTransportClosed) return;
      try {
        process.kill(pid, signal);
      } catch {
        return; // ESRCH: already gone
      }
      await raceWithClock(this.#transportClosed, this.#options.clock, this.#options.killGraceMs);
    }
  }

  /** A server started through a wrapper (`npx`, a shell) must not outlive the pool. */
  async #reapDescendants(pids: readonly number[]): Promise<void> {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const alive = pids.filter(isProcessAlive);
      if (alive.length === 0) return;
      for (const pid of alive) {
        try {
          process.kill(pid, signal);
        } catch {
          // ESRCH: it ended meanwhile
        }
      }
      if (signal === "SIGTERM") {
        await raceWithClock(waitUntilGone(alive), this.#options.clock, this.#options.killGraceMs);
      }
    }
  }

  async #fetchAllTools(): Promise<Tool[]> {
    // A server without the tools capability has no tools; asking would only earn "method not found".
    if (!this.client.getServerCapabilities()?.tools) return [];
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? undefined : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined) {
        if (seen.has(cursor)) {
          throw new GovernanceError(
            "UPSTREAM_UNAVAILABLE",
            `tools/list repeated the cursor ${JSON.stringify(cursor)}`,
          );
        }
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    return tools;
  }

  #invalidateTools(): void {
    this.#tools = undefined;
  }
}

/**
 * Resolves once none of the processes exists, or after about 10 s. Polled in real time: they are not
 * our children (no exit event), and the OS, not the injected clock, decides when they are gone.
 */
async function waitUntilGone(pids: readonly number[]): Promise<void> {
  for (let polls = 0; polls < 500 && pids.some(isProcessAlive); polls++) {
    await new Promise((resolve) => setTimeout(resolve, 20).unref());
  }
}
