/** The pool's record of one configured server: status, restart accounting and its error messages. */
import type { ServerConfig } from "../config/index.js";
import { GovernanceError } from "../core/index.js";
import { describeFailure } from "./connection-failure.js";
import { type RestartBackoff, restartDelayMs } from "./restart-backoff.js";
import type { ServerConnection } from "./server-connection.js";
import { StderrTail } from "./stderr-tail.js";
import type { ServerState, ServerStatus } from "./types.js";

/**
 * What `ServerPool` knows about one server between and across its connections. Used by the pool; not
 * part of the public API.
 */
export class ServerSlot {
  readonly config: ServerConfig;
  /** Stderr of every process of a stdio server; undefined for other transports. */
  readonly tail: StderrTail | undefined;
  status: ServerStatus;
  reason: string | undefined;
  starts = 0;
  connection: ServerConnection | undefined;
  connecting: Promise<ServerConnection> | undefined;
  /** Consecutive failures to start, or deaths of short-lived connections. */
  #quickFailures = 0;
  #downAt: number | undefined;
  #connectedAt: number | undefined;

  /**
   * @param config the server's configuration
   * @param stderrLines how many stderr lines to keep for a stdio server
   */
  constructor(config: ServerConfig, stderrLines: number) {
    this.config = config;
    this.tail = config.transport === "stdio" ? new StderrTail(stderrLines) : undefined;
    this.status = config.enabled ? "idle" : "disabled";
    this.reason = config.enabled ? undefined : "disabled in the configuration";
  }

  /** @returns a snapshot for `ServerPool.state()` */
  state(): ServerState {
    const state: ServerState = {
      id: this.config.id,
      transport: this.config.transport,
      status: this.status,
      starts: this.starts,
    };
    if (this.reason !== undefined) state.reason = this.reason;
    if (this.tail) state.stderrTail = this.tail.lines();
    const pid = this.connection?.pid;
    if (pid !== undefined) state.pid = pid;
    const era = this.connection?.era;
    if (era !== undefined) state.era = era;
    const version = this.connection?.protocolVersion;
    if (version !== undefined) state.protocolVersion = version;
    return state;
  }

  /**
   * How long the next start must still wait: the backoff counts from the last failure, so a use that
   * comes late enough starts at once.
   * @param backoff resolved backoff options
   * @param now current time
   * @returns milliseconds to wait (0 when none)
   */
  restartWaitMs(backoff: RestartBackoff, now: number): number {
    if (this.#downAt === undefined) return 0;
    return Math.max(0, this.#downAt + restartDelayMs(backoff, this.#quickFailures) - now);
  }

  /**
   * Records a successful (re)start.
   * @param connection the new connection
   * @param now current time
   */
  markConnected(connection: ServerConnection, now: number): void {
    this.connection = connection;
    this.status = "connected";
    this.reason = undefined;
    this.#connectedAt = now;
  }

  /**
   * Records a failed start or a lost connection; a connection that lived `resetAfterMs` restarts the count.
   * @param reason why, for `state().reason`
   * @param backoff resolved backoff options
   * @param now current time
   */
  markDown(reason: string, backoff: RestartBackoff, now: number): void {
    const lived = this.#connectedAt === undefined ? 0 : now - this.#connectedAt;
    this.#quickFailures = lived >= backoff.resetAfterMs ? 1 : this.#quickFailures + 1;
    this.#downAt = now;
    this.#connectedAt = undefined;
    this.connection = undefined;
    this.status = "failed";
    this.reason = reason;
  }

  /** Records that the pool closed (a disabled server stays "disabled"). */
  markClosed(): void {
    this.connection = undefined;
    if (this.status === "disabled") return;
    this.status = "closed";
    this.reason = "the pool was closed";
  }

  /**
   * The error of a failed start or a lost connection, with the stderr tail of a stdio server.
   * @param what what went wrong, e.g. "could not be started"
   * @param cause the underlying error
   * @returns a retryable `UPSTREAM_UNAVAILABLE`
   */
  unavailable(what: string, cause: unknown): GovernanceError {
    const id = this.config.id;
    const tail = this.tail?.lines() ?? [];
    const stderr = tail.length === 0 ? "" : `\nLast stderr lines:\n  ${tail.join("\n  ")}`;
    return new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `MCP server '${id}' ${what}: ${describeFailure(cause)}${stderr}`,
      {
        retryable: true,
        cause,
        data: { serverId: id, ...(this.tail ? { stderrTail: tail } : {}) },
      },
    );
  }

  /**
   * The error of calls cut off because one message from a stdio server was larger than the SDK's read
   * buffer allows. The buffer holds one message, so every call in flight on that connection fails.
   * @param limitBytes the read buffer's limit
   * @param cause the SDK's error of the closed connection
   * @returns a non-retryable `RESPONSE_TOO_LARGE` naming the limit and what to do
   */
  tooLarge(limitBytes: number, cause: unknown): GovernanceError {
    const id = this.config.id;
    const mib = Math.round((limitBytes / 1024 / 1024) * 10) / 10;
    return new GovernanceError(
      "RESPONSE_TOO_LARGE",
      `MCP server '${id}' sent a message larger than the stdio limit of ${limitBytes} bytes (${mib} MiB), so the connection was closed; the server restarts on the next call. Ask the tool for less (a narrower query, fewer records or pages); answers this large need the server over streamable HTTP, where the source's maxResponseBytes is the limit.`,
      { retryable: false, cause, data: { serverId: id, maxBytes: limitBytes } },
    );
  }

  /**
   * The error of any use after `close()`.
   * @param cause the underlying error, when a call in flight was cut off
   * @returns a non-retryable `UPSTREAM_UNAVAILABLE` saying that the pool is closed
   */
  closedError(cause?: unknown): GovernanceError {
    return new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `MCP server '${this.config.id}' is not available: the pool is closed.`,
      { data: { serverId: this.config.id }, ...(cause === undefined ? {} : { cause }) },
    );
  }
}
