/**
 * The gateway on one stdio connection, for clients of either revision: the SDK's `serveStdio` reads the
 * connection's opening message and pins one server for the connection's lifetime. An `initialize`
 * (2025-11-25) pins a `GatewaySession`, as before; `server/discover` or a request carrying its version
 * in `_meta` (2026-07-28) pins the stateless face's server, so a v2 client's version probe is answered
 * and it settles on 2026-07-28 (see ARCHITECTURE.md, "The governed MCP gateway").
 *
 * `subscriptions/listen`: `serveStdio` answers it at the connection's entry (its own listen router,
 * which stamps the pinned server's outbound change notifications onto the open listens) and offers no
 * hook before it honours a filter. So the wire under it is wrapped: a listen request is governed before
 * `serveStdio` sees it (the same `listenGovernance` as the HTTP face: surface policy, ledger row, one
 * upstream subscription per server and uri, refused uris left out of the filter), and the listen's end
 * (the client's `notifications/cancelled`, the entry's final result or error for that id, the pipe
 * closing) releases what it subscribed. Inbound messages stay in order behind a listen being governed.
 */
import type { Readable, Writable } from "node:stream";
import type { Transport as TransportV1 } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServerFactory,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  type Transport,
} from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";

/** The revisions a stdio connection can be pinned to. */
export type StdioRevision = "2025-11-25" | "2026-07-28";

/** One stdio connection of the gateway. */
export interface GatewayStdioConnection {
  /** Settles when the connection ended: stdin closed, the 2025 session closed, or `close()`. */
  readonly ended: Promise<void>;
  /** @returns the revision the opening message pinned; `undefined` before the client's first message */
  revision(): StdioRevision | undefined;
  /** Ends the connection (a running call is cancelled and audited). */
  close(): Promise<void>;
}

/** What a stdio connection is served from. */
export interface GatewayStdioSettings {
  stdin: Readable;
  stdout: Writable;
  /** Connects a 2025-11-25 session to the connection's channel; `close` ends it. */
  legacy(transport: TransportV1): Promise<{ close(): Promise<void> }>;
  /** A 2026-07-28 server (one per connection, plus one for a probe the client abandons). */
  modern(): Server;
  /** Governs the connection's `subscriptions/listen` requests (2026-07-28); absent: the SDK's alone. */
  listen?: StdioListenGovernance | undefined;
  /** Open listens of the connection (the SDK refuses more). @default 64 */
  maxListens?: number | undefined;
  onError: (error: unknown) => void;
}

/** The governance of one stdio connection's `subscriptions/listen` requests. */
export interface StdioListenGovernance {
  /**
   * @param request the listen request, as the client sent it
   * @param signal aborted when the listen ends
   * @returns the request to hand to the SDK's listen router (its filter keeping what is allowed)
   */
  govern(request: JSONRPCRequest, signal: AbortSignal): Promise<unknown>;
  /** The connection ended: stop receiving the servers' notifications. */
  close(): void;
}

/**
 * Serves one stdio connection until stdin ends or `close()`.
 * @param settings the pipe and the two faces
 * @returns the connection
 */
export function serveGatewayStdio(settings: GatewayStdioSettings): GatewayStdioConnection {
  let pinned: StdioRevision | undefined;
  let ended = () => {};
  const endedPromise = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const wire = connectionWire(
    new StdioServerTransport(settings.stdin, settings.stdout),
    () => {
      settings.listen?.close();
      ended();
    },
    settings.listen && {
      govern: settings.listen.govern,
      // A 2025-11-25 session has no listen: its method-not-found answer releases it all the same.
      applies: () => pinned !== "2025-11-25",
      onError: settings.onError,
    },
  );
  const factory: McpServerFactory = async ({ era }) => {
    if (era === "modern") {
      pinned = "2026-07-28";
      return settings.modern();
    }
    pinned = "2025-11-25";
    // `serveStdio` only connects and closes what the factory returns: the 1.x session stands in for a
    // v2 server on the channel it is given (a transport of the same shape).
    let session: { close(): Promise<void> } | undefined;
    const legacy = {
      connect: async (channel: Transport) => {
        session = await settings.legacy(channel as unknown as TransportV1);
      },
      close: async () => {
        await session?.close();
      },
    };
    return legacy as unknown as Server;
  };
  const handle = serveStdio(factory, {
    transport: wire,
    onerror: (error) => settings.onError(error),
    maxSubscriptions: settings.maxListens ?? DEFAULT_MAX_LISTENS,
  });
  return {
    ended: endedPromise,
    revision: () => pinned,
    close: async () => {
      await handle.close();
      settings.listen?.close();
      ended();
    },
  };
}

/** Open listens of one stdio connection, unless the gateway says otherwise. */
const DEFAULT_MAX_LISTENS = 64;

/** The listen side of a connection's wire. */
interface WireListen {
  govern: StdioListenGovernance["govern"];
  /** Whether the connection may have listens (not pinned to 2025-11-25). */
  applies(): boolean;
  onError(error: unknown): void;
}

/**
 * The transport `serveStdio` is given: `onClosed` is told when it closes (`serveStdio` owns its
 * `onclose`), and each `subscriptions/listen` request is governed on its way in, released when it ends.
 */
function connectionWire(inner: StdioServerTransport, onClosed: () => void, listen?: WireListen): Transport {
  /** The open listens: request id → the signal that releases their subscriptions. */
  const open = new Map<string | number, AbortController>();
  const end = (id: string | number) => {
    const listening = open.get(id);
    if (listening === undefined) return;
    open.delete(id);
    listening.abort();
  };
  let inbound: Promise<void> = Promise.resolve();
  const receive = async (message: JSONRPCMessage): Promise<JSONRPCMessage> => {
    if (listen === undefined) return message;
    // The method is compared first: the SDK's guards parse the whole message, and most messages are
    // neither a cancellation nor a listen.
    const method = (message as { method?: unknown }).method;
    if (method === "notifications/cancelled" && isJSONRPCNotification(message)) {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === "string" || typeof id === "number") end(id);
      return message;
    }
    if (method !== LISTEN_METHOD || !isListenRequest(message) || !listen.applies()) return message;
    // The SDK's router keeps the latest listen of an id: the earlier one's subscriptions go.
    end(message.id);
    const listening = new AbortController();
    open.set(message.id, listening);
    return (await listen.govern(message, listening.signal)) as JSONRPCMessage;
  };
  const outer: Transport = {
    start: () => {
      inner.onmessage = (message) => {
        inbound = inbound
          .then(() => receive(message))
          .then(
            (governed) => outer.onmessage?.(governed),
            (error: unknown) => {
              listen?.onError(error);
              // Not governed: handed on as sent would honour it ungoverned; without it, the client
              // would wait forever. An error answer ends the listen.
              if (isJSONRPCRequest(message)) {
                end(message.id);
                void inner
                  .send({
                    jsonrpc: "2.0",
                    id: message.id,
                    error: { code: -32603, message: "The listen could not be governed." },
                  })
                  .catch((sendError: unknown) => listen?.onError(sendError));
              }
            },
          )
          .catch((error: unknown) => listen?.onError(error));
      };
      inner.onerror = (error) => outer.onerror?.(error);
      inner.onclose = () => {
        for (const id of [...open.keys()]) end(id);
        try {
          outer.onclose?.();
        } finally {
          onClosed();
        }
      };
      return inner.start();
    },
    send: (message) => {
      // A listen's one answer (its graceful end, or a refusal) ends it (no listen open: nothing to end).
      if (
        open.size > 0 &&
        (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) &&
        message.id !== undefined
      ) {
        end(message.id as string | number);
      }
      return inner.send(message);
    },
    close: () => inner.close(),
  };
  return outer;
}

const LISTEN_METHOD = "subscriptions/listen";

/** A `subscriptions/listen` request claiming a revision in its `_meta` (the SDK refuses it otherwise). */
function isListenRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  if (!isJSONRPCRequest(message) || message.method !== LISTEN_METHOD) return false;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return meta !== undefined && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}
