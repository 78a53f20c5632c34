/** The pool of MCP server connections: lazy, single-flight, self-restarting, cleanly closable. */
import {
  AuthorizationServerMismatchError,
  type AuthProvider,
  type Client,
  type Implementation,
  InsecureTokenEndpointError,
  IssuerMismatchError,
  type LoggingMessageNotificationParams,
  OAuthClientFlowError,
  type OAuthClientProvider,
  OAuthError,
  RegistrationRejectedError,
  SdkHttpError,
  type Transport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type { CallToolResult, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/index.js";
import {
  type Clock,
  GovernanceError,
  isGovernanceError,
  PACKAGE_VERSION,
  redactUrls,
  systemClock,
} from "../core/index.js";
import { describeFailure, isConnectionFailure } from "./connection-failure.js";
import { raceWithClock } from "./race-with-clock.js";
import { type RestartBackoffOptions, resolveRestartBackoff } from "./restart-backoff.js";
import { ServerConnection } from "./server-connection.js";
import { ServerSlot } from "./server-slot.js";
import { createSdkTransport } from "./transports.js";
import type {
  PoolCallOptions,
  PoolRequestOptions,
  ServerState,
  SurfaceMethod,
  SurfaceNotification,
  ToolServerPool,
} from "./types.js";
import type { UpstreamRequestOptions } from "./upstream-requests.js";

/**
 * The error of a server that refused our credentials (or asked for some, and we hold none): a 401 or
 * 403 the auth provider could not resolve, named so that the fix is one command.
 * @returns `UNAUTHORIZED`, or undefined for any other failure
 */
function unauthorized(serverId: string, error: unknown): GovernanceError | undefined {
  // The OAuth client refused to go on (credentials bound to another authorization server, metadata
  // that does not check out) or the authorization server refused it: no command fixes that.
  if (OAUTH_REFUSALS.some((kind) => error instanceof kind)) {
    return new GovernanceError(
      "UNAUTHORIZED",
      `MCP server '${serverId}' could not be authorized: ${redactUrls((error as Error).message)}`,
      { cause: error, data: { serverId } },
    );
  }
  const status = error instanceof SdkHttpError ? error.status : undefined;
  if (!(error instanceof UnauthorizedError) && status !== 401 && status !== 403) return undefined;
  return new GovernanceError(
    "UNAUTHORIZED",
    `MCP server '${serverId}' refused the request as unauthorized${status === undefined ? "" : ` (HTTP ${status})`}. If it is protected by OAuth, run \`sciencegate auth ${serverId}\` (or authorize it on the console's Sources page); if it takes a token, set it with bearer_token_env.`,
    { cause: error, data: { serverId, authorize: `sciencegate auth ${serverId}` } },
  );
}

/** The OAuth client's own refusals and the authorization server's errors. */
const OAUTH_REFUSALS = [
  AuthorizationServerMismatchError,
  IssuerMismatchError,
  InsecureTokenEndpointError,
  RegistrationRejectedError,
  OAuthClientFlowError,
  OAuthError,
] as const;

/** Why a stdio server is down after the SDK closed it over a message past its read buffer. */
const overflowed = (limit: number): string =>
  `the connection closed after a message larger than the stdio limit of ${limit} bytes`;

/** Options of a {@link ServerPool}. Every seam has a real default. */
export interface ServerPoolOptions {
  /** Builds the transport of one (re)start. @default SDK stdio / SSE / streamable HTTP transports */
  createTransport?: (config: ServerConfig) => Transport | Promise<Transport>;
  /** Measures restart backoff, connect deadlines and kill grace. @default systemClock */
  clock?: Clock;
  /** Waits between quick restarts. @default {initialMs: 250, factor: 2, maxMs: 10_000, resetAfterMs: 60_000} */
  restartBackoff?: RestartBackoffOptions;
  /** Lines of stderr kept per stdio server. @default 20 */
  stderrLines?: number;
  /** Sent in `initialize`. @default {name: "sciencegate", version: "0.1.0"} */
  clientInfo?: Implementation;
  /** Deadline for spawn/connect plus `initialize`. @default 30_000 */
  connectTimeoutMs?: number;
  /** Grace after SIGTERM (and after SIGKILL) for a child that outlives the SDK's close. @default 2_000 */
  killGraceMs?: number;
  /** Base environment of stdio children (the server's `env` is laid over it). @default process.env */
  env?: Record<string, string | undefined>;
  /**
   * Authorizes an http or sse server's requests (an OAuth client provider with its stored tokens);
   * used by the default transports. @default none
   */
  authorization?: ((config: ServerConfig) => AuthProvider | OAuthClientProvider | undefined) | undefined;
  /**
   * What the pool tells servers it answers, besides roots (always: a server's configured `roots`, else
   * none). Elicitation is answered by each call's relay (`PoolCallOptions.relay`), `cancel` without one;
   * sampling is declared only when callers' relays answer it (the app provides a model, or a gateway
   * relays it to its own client).
   * @default { elicitation: { form: true, url: true }, sampling: false }
   */
  upstreamRequests?: {
    elicitation?: { form?: boolean; url?: boolean } | false | undefined;
    sampling?: boolean | undefined;
  };
  /** Receives log messages a server sends outside any call (or that cannot be attributed to one). */
  onServerLog?: ((serverId: string, params: LoggingMessageNotificationParams) => void) | undefined;
}

/**
 * One official SDK `Client` per configured MCP server, connected on first use. Concurrent first uses share
 * one connect (one child process); a dead server is restarted on its next use after a growing backoff;
 * `close()` leaves no child behind and nothing restarts afterwards.
 * @example
 * const pool = new ServerPool(config.servers);
 * const tools = await pool.listTools("everything");
 * const result = await pool.callTool("everything", "echo", { message: "hi" }, { timeoutMs: 5_000 });
 * await pool.close();
 */
export class ServerPool implements ToolServerPool {
  readonly #slots = new Map<string, ServerSlot>();
  readonly #listeners = new Set<(serverId: string) => void>();
  readonly #notificationListeners = new Set<(serverId: string, notification: SurfaceNotification) => void>();
  readonly #live = new Set<ServerConnection>();
  readonly #closer = new AbortController();
  readonly #clock: Clock;
  readonly #backoff;
  readonly #createTransport: (config: ServerConfig) => Transport | Promise<Transport>;
  readonly #clientInfo: Implementation;
  readonly #connectTimeoutMs: number;
  readonly #killGraceMs: number;
  readonly #upstream: Omit<UpstreamRequestOptions, "roots" | "onServerLog">;
  readonly #onServerLog: ServerPoolOptions["onServerLog"];
  #closing: Promise<void> | undefined;

  /**
   * @param servers the configured servers, in config order
   * @param options seams and tuning
   * @throws GovernanceError `DUPLICATE_ID` when two servers share an id
   */
  constructor(servers: ServerConfig[], options: ServerPoolOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#backoff = resolveRestartBackoff(options.restartBackoff);
    this.#clientInfo = options.clientInfo ?? { name: "sciencegate", version: PACKAGE_VERSION };
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    this.#killGraceMs = options.killGraceMs ?? 2_000;
    const env = options.env;
    const authorize = options.authorization;
    this.#createTransport =
      options.createTransport ??
      ((config) =>
        createSdkTransport(config, {
          ...(env === undefined ? {} : { env }),
          authProvider: authorize?.(config),
        }));
    const elicitation = options.upstreamRequests?.elicitation;
    this.#upstream = {
      sampling: options.upstreamRequests?.sampling === true,
      elicitation:
        elicitation === false
          ? { form: false, url: false }
          : { form: elicitation?.form !== false, url: elicitation?.url !== false },
    };
    this.#onServerLog = options.onServerLog;
    for (const config of servers) {
      if (this.#slots.has(config.id)) {
        throw new GovernanceError("DUPLICATE_ID", `MCP server '${config.id}' is configured twice.`);
      }
      this.#slots.set(config.id, new ServerSlot(config, options.stderrLines ?? 20));
    }
  }

  /** @returns every configured server id, enabled or not, in config order */
  serverIds(): string[] {
    return [...this.#slots.keys()];
  }

  /**
   * The current state of one server: status, reason, stderr tail (stdio), pid while running, start count.
   * @param serverId a configured server id
   * @returns a snapshot
   * @throws GovernanceError `UNKNOWN_ID` for an id that is not configured
   */
  state(serverId: string): ServerState {
    return this.#slot(serverId).state();
  }

  /**
   * The connected SDK client (`@modelcontextprotocol/client`) of a server, for uses the pool does not
   * cover. Do not close it; use `close()`.
   * @param serverId a configured server id
   * @param signal stops waiting for the connection (the connect itself goes on for other callers)
   * @returns the client of the current connection
   * @throws GovernanceError `UNKNOWN_ID`, `SOURCE_DISABLED`, `UPSTREAM_UNAVAILABLE` (start failed, pool closed)
   */
  async getClient(serverId: string, signal?: AbortSignal): Promise<Client> {
    return (await this.#connection(serverId, signal)).client;
  }

  /**
   * Every tool of the server across all `tools/list` pages, cached until `list_changed` or a reconnect.
   * Connects (or restarts) the server when needed.
   * @param serverId a configured server id
   * @returns the tools in server order
   * @throws GovernanceError `UNKNOWN_ID`, `SOURCE_DISABLED`, `UPSTREAM_UNAVAILABLE`; JSON-RPC errors unchanged
   */
  async listTools(serverId: string): Promise<Tool[]> {
    const connection = await this.#connection(serverId);
    try {
      return await connection.listTools();
    } catch (error) {
      throw await this.#translate(serverId, connection, error, "tools/list");
    }
  }

  /**
   * Calls one tool, connecting (or restarting) the server when needed. The result is the SDK's: `isError`
   * results (bad arguments, unknown tool, handler error) are returned, and timeouts and aborts reject with
   * the SDK's `SdkError` (`REQUEST_TIMEOUT`). The timeout defaults to the server's `toolCallTimeoutMs`, else the
   * SDK's 60 s.
   * @param serverId a configured server id
   * @param name the MCP tool name
   * @param args the tool arguments
   * @param options timeout, abort signal and progress callback, handed to the SDK
   * @returns the SDK's `CallToolResult`
   * @throws GovernanceError `UNKNOWN_ID`, `SOURCE_DISABLED`, `UPSTREAM_UNAVAILABLE` (connection failed or
   *   lost), `RESPONSE_TOO_LARGE` (an HTTP answer crossed `options.maxResponseBytes` while it was read, or a
   *   stdio message crossed the SDK's read buffer, which closes the connection; the server restarts on the
   *   next use)
   */
  async callTool(
    serverId: string,
    name: string,
    args: Record<string, unknown>,
    options: PoolCallOptions = {},
  ): Promise<CallToolResult> {
    const connection = await this.#connection(serverId, options.signal);
    const timeoutMs = options.timeoutMs ?? this.#slot(serverId).config.toolCallTimeoutMs;
    try {
      return await connection.callTool(
        name,
        args,
        timeoutMs === undefined ? options : { ...options, timeoutMs },
      );
    } catch (error) {
      throw await this.#translate(serverId, connection, error, `tools/call ${name}`);
    }
  }

  /**
   * The capabilities a server declared in its current connection, connecting it if it has not started
   * yet (a failed server is left to its next tool call).
   * @param serverId a configured server id
   * @returns its capabilities, or `undefined` when it is disabled or cannot be reached
   */
  async capabilities(serverId: string): Promise<ServerCapabilities | undefined> {
    const slot = this.#slot(serverId);
    if (slot.connection?.isOpen) return slot.connection.client.getServerCapabilities() as ServerCapabilities;
    // A server that is down is not restarted (and its backoff not waited for) just to be asked.
    if (slot.state().status === "failed" || this.#closing) return undefined;
    try {
      const connection = await this.#connection(serverId);
      return connection.client.getServerCapabilities() as ServerCapabilities | undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Sends one request of a server's surface beyond tools (prompts, resources, templates, subscriptions,
   * completion, log level) and returns its result as the server gave it, connecting (or restarting) the
   * server when needed. The timeout defaults to the server's `toolCallTimeoutMs`, else the SDK's 60 s.
   * @param serverId a configured server id
   * @param method the MCP method
   * @param params its params
   * @param options signal and timeout
   * @returns the server's result
   * @throws GovernanceError `UNKNOWN_ID`, `SOURCE_DISABLED`, `UPSTREAM_UNAVAILABLE`, `UNAUTHORIZED`; the
   *   server's JSON-RPC errors as the SDK's `ProtocolError`
   */
  async request(
    serverId: string,
    method: SurfaceMethod,
    params: Record<string, unknown>,
    options: PoolRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const connection = await this.#connection(serverId, options.signal);
    const timeoutMs = options.timeoutMs ?? this.#slot(serverId).config.toolCallTimeoutMs;
    try {
      return await connection.request(
        method,
        params,
        timeoutMs === undefined ? options : { ...options, timeoutMs },
      );
    } catch (error) {
      throw await this.#translate(serverId, connection, error, method);
    }
  }

  /**
   * Subscribes to the servers' surface notifications: a subscribed resource updated, the resource or
   * prompt list changed.
   * @param listener called with the server id and the notification; a throwing listener is ignored
   * @returns a function that unsubscribes
   */
  onNotification(listener: (serverId: string, notification: SurfaceNotification) => void): () => void {
    this.#notificationListeners.add(listener);
    return () => {
      this.#notificationListeners.delete(listener);
    };
  }

  /**
   * Subscribes to tool-list changes of any server: `notifications/tools/list_changed` and reconnects.
   * @param listener called with the server id; a throwing listener is ignored
   * @returns a function that unsubscribes
   */
  onToolsChanged(listener: (serverId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Closes every connection and waits until every child process is gone; idempotent. Afterwards every
   * use throws `UPSTREAM_UNAVAILABLE` ("the pool is closed") and nothing restarts.
   * @returns a promise that resolves once everything is shut down
   */
  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    this.#closer.abort();
    const connecting = [...this.#slots.values()].flatMap((slot) =>
      slot.connecting ? [slot.connecting] : [],
    );
    for (const slot of this.#slots.values()) slot.markClosed();
    // Aborted connects shut their own connection down; wait for them, then for everything still alive.
    await Promise.allSettled(connecting);
    await Promise.allSettled([...this.#live].map((connection) => connection.shutdown()));
  }

  #slot(serverId: string): ServerSlot {
    const slot = this.#slots.get(serverId);
    if (!slot) {
      const known = this.serverIds().join(", ") || "none";
      throw new GovernanceError("UNKNOWN_ID", `Unknown MCP server '${serverId}' (configured: ${known}).`);
    }
    return slot;
  }

  async #connection(serverId: string, signal?: AbortSignal): Promise<ServerConnection> {
    const slot = this.#slot(serverId);
    if (!slot.config.enabled) {
      throw new GovernanceError(
        "SOURCE_DISABLED",
        `MCP server '${serverId}' is disabled in the configuration.`,
      );
    }
    if (this.#closing) throw slot.closedError();
    if (slot.connection?.isOpen) return slot.connection;
    if (!slot.connecting) {
      const connecting = this.#connect(slot);
      slot.connecting = connecting;
      const clear = () => {
        if (slot.connecting === connecting) slot.connecting = undefined;
      };
      connecting.then(clear, clear);
    }
    if (!signal) return slot.connecting;
    signal.throwIfAborted();
    // Only this caller stops waiting; the shared connect goes on for the others.
    const outcome = await raceWithClock(slot.connecting, this.#clock, Number.POSITIVE_INFINITY, signal);
    if (outcome.kind !== "done") throw signal.reason;
    return outcome.value;
  }

  async #connect(slot: ServerSlot): Promise<ServerConnection> {
    const id = slot.config.id;
    slot.status = "connecting";
    const wait = slot.restartWaitMs(this.#backoff, this.#clock.now());
    if (wait > 0) {
      try {
        await this.#clock.sleep(wait, this.#closer.signal);
      } catch {
        throw slot.closedError();
      }
    }
    if (this.#closing) throw slot.closedError();
    let connection: ServerConnection | undefined;
    try {
      const transport = await this.#createTransport(slot.config);
      slot.starts++;
      const onServerLog = this.#onServerLog;
      connection = new ServerConnection(transport, {
        serverId: id,
        clientInfo: this.#clientInfo,
        clock: this.#clock,
        killGraceMs: this.#killGraceMs,
        protocol: slot.config.protocol ?? "auto",
        upstream: {
          ...this.#upstream,
          roots: slot.config.roots ?? [],
          onServerLog: onServerLog && ((params) => onServerLog(id, params)),
        },
        ...(slot.tail ? { tail: slot.tail } : {}),
        onToolsChanged: () => this.#emitToolsChanged(id),
        onNotification: (notification) => this.#emitNotification(id, notification),
        onLost: () => {
          const limit = connection?.overflowLimit;
          const reason =
            limit === undefined
              ? "the connection closed (the server exited or went away)"
              : overflowed(limit);
          this.#drop(slot, connection, reason);
        },
      });
      this.#live.add(connection);
      await connection.connect(this.#connectTimeoutMs, this.#closer.signal);
    } catch (error) {
      await connection?.settleStderr();
      if (connection) this.#retire(connection);
      if (this.#closing) throw slot.closedError(error);
      const isOwnError =
        isGovernanceError(error) && (error.code === "INVALID_CONFIG" || error.code === "UNAUTHORIZED");
      const failure = isOwnError
        ? error
        : (unauthorized(id, error) ?? slot.unavailable("could not be started", error));
      slot.markDown(`could not be started: ${describeFailure(error)}`, this.#backoff, this.#clock.now());
      throw failure;
    }
    if (this.#closing) {
      await connection.shutdown();
      throw slot.closedError();
    }
    slot.markConnected(connection, this.#clock.now());
    // A new connection may serve a different tool list than the one before it.
    if (slot.starts > 1) this.#emitToolsChanged(id);
    return connection;
  }

  /** Forgets the slot's current connection after it failed; the next use restarts the server. */
  #drop(slot: ServerSlot, connection: ServerConnection | undefined, reason: string): void {
    if (!connection || slot.connection !== connection) return;
    this.#retire(connection);
    if (!this.#closing) slot.markDown(reason, this.#backoff, this.#clock.now());
  }

  /** Shuts a connection down in the background; `close()` still waits for it through `#live`. */
  #retire(connection: ServerConnection): void {
    void connection.shutdown().finally(() => this.#live.delete(connection));
  }

  async #translate(
    serverId: string,
    connection: ServerConnection,
    error: unknown,
    what: string,
  ): Promise<unknown> {
    const slot = this.#slot(serverId);
    if (this.#closing) return slot.closedError(error);
    const refused = unauthorized(serverId, error);
    if (refused) return refused;
    if (!isConnectionFailure(error)) return error;
    const limit = connection.overflowLimit;
    if (limit !== undefined) {
      this.#drop(slot, connection, overflowed(limit));
      return slot.tooLarge(limit, error);
    }
    // HTTP transports stay "open" after a failed request; dropping the connection makes the next use reconnect.
    this.#drop(slot, connection, `the connection failed during ${what}: ${describeFailure(error)}`);
    await connection.settleStderr();
    return slot.unavailable(`lost the connection during ${what}`, error);
  }

  #emitNotification(serverId: string, notification: SurfaceNotification): void {
    for (const listener of [...this.#notificationListeners]) {
      try {
        listener(serverId, notification);
      } catch {
        // As for tool-list listeners: one failing listener must not starve the others.
      }
    }
  }

  #emitToolsChanged(serverId: string): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(serverId);
      } catch {
        // A failing listener must not break the connection or starve the other listeners.
      }
    }
  }
}
