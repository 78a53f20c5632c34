/** One live connection of the pool: an SDK `Client` over one transport (and, for stdio, one child). */
import {
  type CallToolRequestOptions,
  type CallToolRequestParams,
  Client,
  type Implementation,
  isInputRequiredResult,
  type McpSubscription,
  SdkError,
  SdkErrorCode,
  type Transport,
  type VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ProtocolSetting } from "../config/index.js";
import type { Clock } from "../core/index.js";
import { GovernanceError } from "../core/index.js";
import { readBufferLimitOf } from "./connection-failure.js";
import { connectInEra, SharedTransport } from "./era-connect.js";
import { descendantPids, isProcessAlive } from "./process-tree.js";
import { raceWithClock } from "./race-with-clock.js";
import { withResponseCap } from "./response-cap.js";
import { redactCallOptions } from "./sent-credentials.js";
import type { StderrTail } from "./stderr-tail.js";
import { childPidOf, credentialsSentBy, holdTransport, isStreamableHttp, stderrOf } from "./transports.js";
import type {
  InputRound,
  PoolCallOptions,
  PoolRequestOptions,
  ProtocolEra,
  SurfaceMethod,
  SurfaceNotification,
} from "./types.js";
import {
  answerInputRequests,
  CallScope,
  clientCapabilities,
  handleServerRequests,
  type UpstreamRequestOptions,
  withCallScope,
} from "./upstream-requests.js";

/** How long to wait for the last stderr lines of a child that has exited. */
const STDERR_SETTLE_MS = 200;

/** Most `tools/list` pages read before a server counts as looping. */
const MAX_LIST_PAGES = 1000;

/** The notifications of a server's surface beyond tools that the pool passes on. */
const SURFACE_NOTIFICATIONS = [
  "notifications/resources/updated",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
] as const satisfies readonly SurfaceNotification["method"][];

/** Most `input_required` rounds of one 2026-07-28 call before the server counts as looping. */
const MAX_INPUT_ROUNDS = 16;

/** A `tools/call` request's params, with the answers and state of a 2026-07-28 retry. */
type RoundParams = CallToolRequestParams & {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
};

/** Options of a {@link ServerConnection}. */
export interface ServerConnectionOptions {
  /** The server's id, in the errors and contexts it produces. */
  serverId: string;
  clientInfo: Implementation;
  clock: Clock;
  /** Grace between SIGTERM and SIGKILL, and after SIGKILL, when reaping a child. */
  killGraceMs: number;
  /** The revision to speak (see `ProtocolSetting`). */
  protocol: ProtocolSetting;
  /** What the connection declares it answers, and the server's roots. */
  upstream: UpstreamRequestOptions;
  /** Receives the stderr of a stdio child. */
  tail?: StderrTail;
  /** The server sent `notifications/tools/list_changed`. */
  onToolsChanged: () => void;
  /** The server sent a surface notification (a resource updated, the resource or prompt list changed). */
  onNotification?: ((notification: SurfaceNotification) => void) | undefined;
  /** The transport closed on its own (child exited, peer went away) while the connection was open. */
  onLost: () => void;
}

/**
 * One connection: creates the `Client` in the revision the server speaks, caches the tool list until
 * `list_changed`, brings the server's requests to the call they belong to, notices when the transport
 * closes, and on shutdown makes sure the child process is gone.
 * Used by `ServerPool`; not part of the public API.
 */
export class ServerConnection {
  #client: Client | undefined;
  readonly #shared: SharedTransport;
  /** Whether answers arrive over streamable HTTP (through the capped fetch, see `withResponseCap`). */
  readonly #readsOverHttp: boolean;
  readonly #options: ServerConnectionOptions;
  readonly #transportClosed: Promise<void>;
  readonly #stderrDone: Promise<void> | undefined;
  /** The calls in flight, to which a server request that names no call is attributed when alone. */
  readonly #inFlight = new Set<CallScope>();
  #subscription: McpSubscription | undefined;
  #isTransportClosed = false;
  #isOpen = false;
  #overflowLimit: number | undefined;
  #pid: number | undefined;
  #tools: Promise<Tool[]> | undefined;
  #shutdown: Promise<void> | undefined;

  /**
   * @param transport an unstarted transport (ownership passes to the connection)
   * @param options callbacks, clock, revision, upstream answers and stderr tail
   */
  constructor(transport: Transport, options: ServerConnectionOptions) {
    this.#shared = new SharedTransport(transport);
    this.#readsOverHttp = isStreamableHttp(transport);
    this.#options = options;
    const stderr = stderrOf(transport);
    this.#stderrDone = stderr && options.tail ? options.tail.follow(stderr) : undefined;
    let markClosed = () => {};
    this.#transportClosed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    // For stdio this fires on the child's "close" event, i.e. after the process has exited and been reaped.
    this.#shared.onInnerClose = () => {
      this.#isTransportClosed = true;
      markClosed();
      if (this.#isOpen) {
        this.#isOpen = false;
        this.#invalidateTools();
        options.onLost();
      }
    };
    // The SDK reports a message over its stdio read buffer here, then closes.
    this.#shared.onInnerError = (error) => {
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
    // The pid must be known before a connect can fail: on failure the SDK forgets its child at once.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.#pid = childPidOf(transport);
    };
  }

  /** The SDK client of this connection, once connected. */
  get client(): Client {
    if (this.#client === undefined) throw new GovernanceError("UPSTREAM_UNAVAILABLE", "not connected");
    return this.#client;
  }

  /** Whether the connection is initialized and its transport has not closed. */
  get isOpen(): boolean {
    return this.#isOpen;
  }

  /** The revision the connection speaks, once connected. */
  get era(): ProtocolEra | undefined {
    const era = this.#client?.getProtocolEra();
    if (era === undefined) return undefined;
    return era === "modern" ? "2026-07-28" : "2025-11-25";
  }

  /** The protocol version agreed with the server, once connected. */
  get protocolVersion(): string | undefined {
    return this.#client?.getNegotiatedProtocolVersion();
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
    return this.#isTransportClosed ? undefined : (childPidOf(this.#shared.inner) ?? this.#pid);
  }

  /**
   * Starts the transport and connects in the configured revision (`connectInEra`).
   * @param timeoutMs deadline for start plus the handshake, on the injected clock
   * @param signal aborts the attempt (the pool is closing)
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` on timeout or abort; the SDK's error when it fails
   */
  async connect(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const outcome = await raceWithClock(
      this.#held(() =>
        connectInEra(
          this.#shared,
          this.#options.protocol,
          (negotiation) => this.#newClient(negotiation),
          timeoutMs,
        ),
      ),
      this.#options.clock,
      timeoutMs,
      signal,
    );
    if (outcome.kind === "timeout") {
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", `did not finish connecting within ${timeoutMs} ms`, {
        retryable: true,
      });
    }
    if (outcome.kind === "aborted") throw new GovernanceError("UPSTREAM_UNAVAILABLE", "pool is closed");
    if (this.#isTransportClosed)
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", "connection closed", { retryable: true });
    this.#client = outcome.value;
    this.#isOpen = true;
    await this.#listenForChanges();
  }

  /**
   * Every tool of the server across all pages; cached until `list_changed` or the connection ends.
   * Concurrent callers share one listing.
   * @returns the tools in server order
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the pages do not end; SDK errors unchanged
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
   * Calls one tool: its timeout, signal and progress go to the SDK; what the server asks during the call
   * goes to the call's relay (mid-call on 2025-11-25, `input_required` rounds on 2026-07-28, which this
   * method answers and retries until the result is complete).
   * @param name the MCP tool name
   * @param args the tool arguments
   * @param given per-call options (what the server asks and tells reaches them with credentials redacted)
   * @returns the server's result (`isError` results included)
   * @throws GovernanceError `RESPONSE_TOO_LARGE` when an HTTP answer crossed `maxResponseBytes`; a relay's
   *   own error when it ended the call; the SDK's errors otherwise
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    given: PoolCallOptions,
  ): Promise<CallToolResult> {
    const credentials = credentialsSentBy(this.#shared.inner);
    const options = redactCallOptions(given, credentials);
    const continued = options.continueFrom;
    const scope = new CallScope(this.#options.serverId, options.relay, continued?.questionsBefore ?? 0);
    const { signal } = options;
    const forward = () => scope.controller.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener("abort", forward, { once: true });
    let capped: GovernanceError | undefined;
    this.#inFlight.add(scope);
    try {
      const run = () =>
        this.#held(() => withCallScope(scope, () => this.#callRounds(scope, name, args, options)));
      // Only the HTTP transport reads answers through the capped fetch; elsewhere the cap's async
      // context would be pure cost (stdio has its own message limit).
      const result =
        options.maxResponseBytes === undefined || !this.#readsOverHttp
          ? await run()
          : await withResponseCap(
              options.maxResponseBytes,
              (error) => {
                capped = error;
                scope.controller.abort(error);
              },
              run,
            );
      if (scope.failure !== undefined) throw scope.failure.error;
      // A server may echo the token it was sent; nothing it answers carries one further.
      return credentials?.redact(result) ?? result;
    } catch (error) {
      // The SDK rejects an aborted request with its own error; the reason of the abort is the news.
      const failure = scope.failure !== undefined ? scope.failure.error : (capped ?? error);
      throw credentials?.redactError(failure) ?? failure;
    } finally {
      this.#inFlight.delete(scope);
      signal?.removeEventListener("abort", forward);
    }
  }

  /**
   * Sends one request of the server's surface beyond tools, as the client gives it.
   * @param method the MCP method
   * @param params its params, as the gateway's client sent them
   * @param options signal and timeout
   * @returns the server's result
   * @throws the SDK's errors (a server's JSON-RPC error is a `ProtocolError` with its code)
   */
  async request(
    method: SurfaceMethod,
    params: Record<string, unknown>,
    options: PoolRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const client = this.client;
    const sendOptions = {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    };
    // Each verb through its own SDK method, so the SDK checks the result's shape as for its own callers.
    const send = (): Promise<unknown> => {
      const p = params as never;
      switch (method) {
        case "prompts/list":
          return client.listPrompts(p, sendOptions);
        case "prompts/get":
          return client.getPrompt(p, sendOptions);
        case "resources/list":
          return client.listResources(p, sendOptions);
        case "resources/templates/list":
          return client.listResourceTemplates(p, sendOptions);
        case "resources/read":
          return client.readResource(p, sendOptions);
        case "resources/subscribe":
          return client.subscribeResource(p, sendOptions);
        case "resources/unsubscribe":
          return client.unsubscribeResource(p, sendOptions);
        case "completion/complete":
          return client.complete(p, sendOptions);
        case "logging/setLevel":
          return client.setLoggingLevel((params as { level: never }).level, sendOptions);
      }
    };
    return (await this.#held(send)) as Record<string, unknown>;
  }

  async #callRounds(
    scope: CallScope,
    name: string,
    args: Record<string, unknown>,
    options: PoolCallOptions,
  ): Promise<CallToolResult> {
    const client = this.client;
    const { timeoutMs, onProgress } = options;
    const sendOptions: CallToolRequestOptions = {
      signal: scope.controller.signal,
      allowInputRequired: true,
      ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
    };
    if (onProgress !== undefined) {
      sendOptions.onprogress = ({ progress, total, message }) =>
        onProgress({
          progress,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        });
    }
    const logMeta =
      options.relay?.onLog !== undefined && this.era === "2026-07-28"
        ? { _meta: { "io.modelcontextprotocol/logLevel": "info" } }
        : {};
    const base: RoundParams = { name, arguments: args, ...logMeta };
    const continued = options.continueFrom;
    let params = continued === undefined ? base : await this.#retryParams(scope, base, continued);
    for (let index = continued === undefined ? 0 : continued.index + 1; ; index++) {
      // The retry's inputResponses and requestState are 2026-07-28 params the SDK sends as given.
      const result = await client.callTool(params as CallToolRequestParams, sendOptions);
      if (!isInputRequiredResult(result)) return result as CallToolResult;
      if (index >= MAX_INPUT_ROUNDS) {
        throw new GovernanceError(
          "UPSTREAM_UNAVAILABLE",
          `MCP server '${this.#options.serverId}' still asked for input after ${MAX_INPUT_ROUNDS} rounds of ${name}.`,
          { data: { serverId: this.#options.serverId } },
        );
      }
      const { inputRequests, requestState } = result;
      params = await this.#retryParams(scope, base, { inputRequests, requestState, index });
    }
  }

  /** The retry of an `input_required` round: its answers and the server's state, echoed as they came. */
  async #retryParams(scope: CallScope, base: RoundParams, round: InputRound): Promise<RoundParams> {
    scope.round = {
      inputRequests: round.inputRequests,
      requestState: round.requestState,
      index: round.index,
    };
    const inputRequests = round.inputRequests as Parameters<typeof answerInputRequests>[1];
    const inputResponses = await answerInputRequests(scope, inputRequests, this.#options.upstream);
    return {
      ...base,
      inputResponses,
      ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
    };
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
   * Runs `work` with the transport counted as the process's work: between requests an idle stdio child
   * or HTTP event stream does not keep the app's process alive (see `holdTransport`).
   */
  async #held<T>(work: () => Promise<T>): Promise<T> {
    const release = holdTransport(this.#shared.inner);
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
    await this.#subscription?.close().catch(() => undefined);
    if (this.#client) await this.#client.close().catch(() => undefined);
    else await this.#shared.inner.close().catch(() => undefined);
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

  /** A client for one connection attempt, with every handler set before it connects. */
  #newClient(negotiation: VersionNegotiationOptions): Client {
    const client = new Client(this.#options.clientInfo, {
      capabilities: clientCapabilities(this.#options.upstream),
      versionNegotiation: negotiation,
      inputRequired: { autoFulfill: false },
      listMaxPages: MAX_LIST_PAGES,
    });
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      this.#invalidateTools();
      this.#options.onToolsChanged();
    });
    const onNotification = this.#options.onNotification;
    if (onNotification !== undefined) {
      for (const method of SURFACE_NOTIFICATIONS) {
        client.setNotificationHandler(method, (notification) =>
          onNotification({ method, params: notification.params as Record<string, unknown> | undefined }),
        );
      }
    }
    handleServerRequests(client, this.#options.upstream, this.#inFlight);
    return client;
  }

  /** On 2026-07-28, change notifications come only on a `subscriptions/listen` stream. */
  async #listenForChanges(): Promise<void> {
    const client = this.client;
    const capabilities = client.getServerCapabilities();
    if (client.getProtocolEra() !== "modern") return;
    const filter = {
      ...(capabilities?.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(capabilities?.prompts?.listChanged && this.#options.onNotification
        ? { promptsListChanged: true }
        : {}),
      ...(capabilities?.resources?.listChanged && this.#options.onNotification
        ? { resourcesListChanged: true }
        : {}),
    };
    if (Object.keys(filter).length === 0) return;
    try {
      this.#subscription = await client.listen(filter);
    } catch {
      // Without the stream the tool list is still read on every reconnect; the calls go on.
    }
  }

  async #fetchAllTools(): Promise<Tool[]> {
    const client = this.client;
    // A server without the tools capability has no tools; asking would only earn "method not found".
    if (!client.getServerCapabilities()?.tools) return [];
    try {
      return (await client.listTools()).tools as Tool[];
    } catch (error) {
      if (error instanceof SdkError && error.code === SdkErrorCode.ListPaginationExceeded) {
        throw new GovernanceError(
          "UPSTREAM_UNAVAILABLE",
          `tools/list did not end after ${MAX_LIST_PAGES} pages`,
          { cause: error },
        );
      }
      throw error;
    }
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
