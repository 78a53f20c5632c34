/**
 * The gateway on one stdio connection, for clients of either revision: the SDK's `serveStdio` reads the
 * connection's opening message and pins one server for the connection's lifetime. An `initialize`
 * (2025-11-25) pins a `GatewaySession`, as before; `server/discover` or a request carrying its version
 * in `_meta` (2026-07-28) pins the stateless face's server, so a v2 client's version probe is answered
 * and it settles on 2026-07-28 (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import type { Readable, Writable } from "node:stream";
import type { Transport as TransportV1 } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerFactory, Server, Transport } from "@modelcontextprotocol/server";
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
  onError: (error: unknown) => void;
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
  const wire = observedClose(new StdioServerTransport(settings.stdin, settings.stdout), () => ended());
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
  });
  return {
    ended: endedPromise,
    revision: () => pinned,
    close: async () => {
      await handle.close();
      ended();
    },
  };
}

/** The transport, with `onClosed` told when it closes (`serveStdio` owns its `onclose`). */
function observedClose(inner: StdioServerTransport, onClosed: () => void): Transport {
  const outer: Transport = {
    start: () => {
      inner.onmessage = (message) => outer.onmessage?.(message);
      inner.onerror = (error) => outer.onerror?.(error);
      inner.onclose = () => {
        try {
          outer.onclose?.();
        } finally {
          onClosed();
        }
      };
      return inner.start();
    },
    send: (message) => inner.send(message),
    close: () => inner.close(),
  };
  return outer;
}
