/**
 * One MCP session of the gateway over Streamable HTTP: its SDK transport, its `GatewaySession`, the
 * client's requests still open and the idle timer (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../core/index.js";
import type { GatewayServer } from "./create-gateway-server.js";
import type { GatewaySession } from "./gateway-session.js";

/** What an HTTP session needs from its server. */
export interface GatewayHttpSessionSettings {
  /** The MCP session id (`Mcp-Session-Id`); the governance session is `gateway:<id>`. */
  id: string;
  clock: Clock;
  idleTimeoutMs: number;
  /** Called once the session was idle for `idleTimeoutMs`. */
  onIdle: (session: GatewayHttpSession) => void;
}

/**
 * A session is idle when none of the client's JSON-RPC requests is open (answered or cancelled) and no
 * HTTP request arrived for `idleTimeoutMs`. Open requests are counted on the transport's two message
 * paths, not per HTTP request: a cancelled call's POST stream stays open with no answer to come.
 */
export class GatewayHttpSession {
  readonly id: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly #settings: GatewayHttpSessionSettings;
  readonly #open = new Set<RequestId>();
  #cancelIdle: (() => void) | undefined;
  #session: GatewaySession | undefined;
  #closed = false;

  /** @param settings id, clock, idle timeout and what to do when idle */
  constructor(settings: GatewayHttpSessionSettings) {
    this.#settings = settings;
    this.id = settings.id;
    this.transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => settings.id });
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
   * Opens the governed session `gateway:<id>` on the transport.
   * @param gateway the gateway
   * @returns the session
   * @throws GovernanceError `CANCELLED` when the gateway is closed
   */
  async connect(gateway: GatewayServer): Promise<GatewaySession> {
    const session = await gateway.connect(this.transport, { sessionId: `gateway:${this.id}` });
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
      const answered = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
      if (answered && message.id !== undefined) this.#settle(message.id);
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

  #received(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      this.#open.add(message.id);
      this.#touch();
    } else if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) this.#settle(requestId);
    }
  }

  #settle(id: RequestId): void {
    if (this.#open.delete(id) && this.#open.size === 0) this.#touch();
  }

  /** Restarts the idle timer, or stops it while a request is open. */
  #touch(): void {
    this.#cancelIdle?.();
    this.#cancelIdle = undefined;
    if (this.#closed || this.#open.size > 0) return;
    this.#cancelIdle = startTimer(this.#settings.clock, this.#settings.idleTimeoutMs, () =>
      this.#settings.onIdle(this),
    );
  }
}

function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.timer) return clock.timer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => undefined);
  return () => controller.abort();
}
