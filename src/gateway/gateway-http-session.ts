/**
 * One MCP session of the gateway over Streamable HTTP: its SDK transport, its `GatewaySession`, the
 * principal it belongs to, the client's requests still open and the idle timer (see ARCHITECTURE.md,
 * "The governed MCP gateway").
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { type Clock, startTimer } from "../core/index.js";
import type { GatewayServer } from "./create-gateway-server.js";
import type { GatewayPrincipal } from "./gateway-http-guard.js";
import type { GatewaySession } from "./gateway-session.js";

/** What an HTTP session needs from its server. */
export interface GatewayHttpSessionSettings {
  /**
   * The MCP session id (`Mcp-Session-Id`): known to the client that opened the session and to nobody
   * else, so it is never a governance id, never stored and never logged.
   */
  id: string;
  /** Who opened the session: a request of anyone else is answered as if the session did not exist. */
  principal: GatewayPrincipal;
  /** The principal and its address: the unit of the per-client limits. */
  client: string;
  clock: Clock;
  /** How long a session that made requests may stay idle. */
  idleTimeoutMs: number;
  /** How long a session whose client sent nothing after `initialize` may stay idle. */
  unusedTimeoutMs: number;
  /** Called once the session was idle for its timeout. */
  onIdle: (session: GatewayHttpSession) => void;
}

/**
 * A session is idle when none of the client's JSON-RPC requests is open (answered or cancelled) and no
 * HTTP request arrived for `idleTimeoutMs` (`unusedTimeoutMs` until the client sends anything after
 * `initialize`). Open requests are counted on the transport's two message paths, not per HTTP request:
 * a cancelled call's POST stream stays open with no answer to come.
 */
export class GatewayHttpSession {
  readonly id: string;
  readonly principal: GatewayPrincipal;
  readonly client: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly #settings: GatewayHttpSessionSettings;
  readonly #open = new Set<RequestId>();
  #cancelIdle: (() => void) | undefined;
  #session: GatewaySession | undefined;
  #closed = false;
  #used = false;
  #lastActiveAt: number;

  /** @param settings ids, principal, clock, idle timeouts and what to do when idle */
  constructor(settings: GatewayHttpSessionSettings) {
    this.#settings = settings;
    this.id = settings.id;
    this.principal = settings.principal;
    this.client = settings.client;
    this.#lastActiveAt = settings.clock.now();
    this.transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => settings.id });
  }

  /** Whether the client sent anything after `initialize`. */
  get isUsed(): boolean {
    return this.#used;
  }

  /** When the last HTTP request or answered request was (the clock's time). */
  get lastActiveAt(): number {
    return this.#lastActiveAt;
  }

  /** Whether the session may be closed to make room: initialized, and none of its requests open. */
  get isEvictable(): boolean {
    return !this.#closed && this.isInitialized && this.#open.size === 0;
  }

  /**
   * Whether a request of this id is open in the session: a second request under it would make its
   * answer ambiguous (the SDK keys requests by id), so the router refuses it.
   * @param id a JSON-RPC request id
   */
  isOpen(id: RequestId): boolean {
    return this.#open.has(id);
  }

  /** The governed session, once connected. */
  get session(): GatewaySession | undefined {
    return this.#session;
  }

  /** Whether the transport accepted an `initialize` (until then the session is not served). */
  get isInitialized(): boolean {
    return this.transport.sessionId !== undefined;
  }

  /**
   * Opens the governed session (`gateway:<uuid>`, not derived from the transport id) on the transport.
   * @param gateway the gateway
   * @returns the session
   * @throws GovernanceError `CANCELLED` when the gateway is closed
   */
  async connect(gateway: GatewayServer): Promise<GatewaySession> {
    // A governance id of its own (`gateway:<uuid>`), unrelated to the transport id: the ledger, the
    // console and `sciencegate audit` show it, and it opens nothing.
    const session = await gateway.connect(this.transport, {
      principal: this.principal.user,
      mayApprove: this.principal.mayApprove,
    });
    this.#session = session;
    void session.ended.then(() => {
      this.#closed = true;
      this.#cancelIdle?.();
    });
    const deliver = this.transport.onmessage;
    this.transport.onmessage = (message, extra) => {
      this.#received(message);
      deliver?.(message, extra);
    };
    const send = this.transport.send.bind(this.transport);
    this.transport.send = (message, options) => {
      // What the session's server sends is a well-formed message (no need for the SDK's guards, which
      // parse all of it): an answer is the one with a result or an error.
      const answer = message as { result?: unknown; error?: unknown; id?: RequestId };
      const answered = "result" in answer || "error" in answer;
      if (answered && answer.id !== undefined) this.#settle(answer.id);
      return send(message, options);
    };
    this.#touch();
    return session;
  }

  /**
   * Passes one HTTP request to the transport; it counts as activity.
   * @param body the parsed POST body (`undefined` for GET and DELETE)
   */
  async handle(request: IncomingMessage, response: ServerResponse, body?: unknown): Promise<void> {
    // Any request after `initialize` (its `initialized` notification, the GET stream) shows a client
    // that stayed; a flood of bare `initialize` requests never gets here.
    if (this.isInitialized) this.#used = true;
    this.#touch();
    await this.transport.handleRequest(request, response, body);
  }

  /**
   * Answers every open request with an error (so the client is not left waiting), then closes the
   * session: running calls are aborted and audited as `CANCELLED`.
   * @param reason the error message the client reads
   */
  async close(reason: string): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelIdle?.();
    const open = [...this.#open];
    this.#open.clear();
    await Promise.allSettled(
      open.map((id) =>
        this.transport.send({
          jsonrpc: "2.0",
          id,
          error: { code: ErrorCode.ConnectionClosed, message: reason },
        }),
      ),
    );
    await (this.#session?.close() ?? this.transport.close());
  }

  /** A message the transport parsed (`JSONRPCMessageSchema`): its keys tell its kind. */
  #received(message: JSONRPCMessage): void {
    if ("method" in message && "id" in message) {
      this.#open.add(message.id);
      this.#touch();
    } else if ("method" in message && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) this.#settle(requestId);
    }
  }

  #settle(id: RequestId): void {
    if (this.#open.delete(id) && this.#open.size === 0) this.#touch();
  }

  /** Marks activity: the session is idle once its timeout has passed since the last with none open. */
  #touch(): void {
    this.#lastActiveAt = this.#settings.clock.now();
    this.#arm();
  }

  /**
   * Starts the idle timer unless one runs or a request is open. A running timer is not restarted on
   * each request (three times a call): when it fires it looks at the last activity and, if the session
   * was active since, waits out the rest.
   */
  #arm(): void {
    if (this.#closed || this.#open.size > 0 || this.#cancelIdle !== undefined) return;
    this.#wait(this.#timeoutMs());
  }

  #wait(ms: number): void {
    this.#cancelIdle = startTimer(this.#settings.clock, ms, () => {
      this.#cancelIdle = undefined;
      // A request open now re-arms the timer when it is answered (`#settle`).
      if (this.#closed || this.#open.size > 0) return;
      const rest = this.#lastActiveAt + this.#timeoutMs() - this.#settings.clock.now();
      if (rest > 0) this.#wait(rest);
      else this.#settings.onIdle(this);
    });
  }

  #timeoutMs(): number {
    const { idleTimeoutMs, unusedTimeoutMs } = this.#settings;
    return this.#used ? idleTimeoutMs : Math.min(unusedTimeoutMs, idleTimeoutMs);
  }
}
