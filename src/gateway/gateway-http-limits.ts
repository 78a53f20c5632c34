/**
 * The gateway's HTTP resource bounds below the MCP layer: connections per client address and in total,
 * silent or idle sockets closed, header and body read deadlines, and the bytes of request bodies held
 * in memory while they are read, per client and in total (see ARCHITECTURE.md, "The governed MCP
 * gateway"). Each bound refuses with a status a client can read, never by growing.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** The bounds of `limitConnections`. */
export interface ConnectionLimitSettings {
  /** Open connections at once, all clients together. */
  maxConnections: number;
  /** Open connections at once from one address. */
  maxConnectionsPerClient: number;
  /**
   * How long a connection may take to send a request's headers, and stay silent with no request in
   * progress (a new connection that sends nothing, a kept-alive one between requests).
   */
  headersTimeoutMs: number;
}

/** What `limitConnections` reports. */
export interface ConnectionCounters {
  /** Connections open now. */
  open(): number;
  /** Connections refused (over a bound) since the server started. */
  refused(): number;
  /** Connections closed for silence since the server started. */
  silenced(): number;
}

/**
 * Bounds a server's connections: one over a bound is answered `503` on the raw socket and closed; a
 * connection with no request in progress is closed after `headersTimeoutMs` of silence (an SSE answer
 * still being written is a request in progress, however quiet). Call before the server listens.
 * @param server the gateway's HTTP server
 * @param settings the bounds
 * @returns live counters
 */
export function limitConnections(server: Server, settings: ConnectionLimitSettings): ConnectionCounters {
  const perAddress = new Map<string, number>();
  /** Requests in progress per socket (kept-alive or pipelined requests follow each other). */
  const busy = new WeakMap<Socket, number>();
  let open = 0;
  let refused = 0;
  let silenced = 0;

  // Slow headers are Node's `headersTimeout` (set where the server is created, with its checking
  // interval); a connection that sends nothing at all never starts one, so silence is timed here.
  server.timeout = settings.headersTimeoutMs;
  server.keepAliveTimeout = Math.min(server.keepAliveTimeout, settings.headersTimeoutMs);

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const fromAddress = perAddress.get(address) ?? 0;
    if (open >= settings.maxConnections || fromAddress >= settings.maxConnectionsPerClient) {
      refused++;
      const why =
        open >= settings.maxConnections
          ? "the gateway has too many open connections"
          : "this address has too many open connections";
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Type: text/plain\r\nContent-Length: ${why.length + 1}\r\n\r\n${why}\n`,
      );
      socket.destroySoon();
      return;
    }
    open++;
    perAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      open--;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    response.once("close", () => busy.set(socket, Math.max(0, (busy.get(socket) ?? 1) - 1)));
  });
  // A listener here keeps Node from destroying every quiet socket: a quiet SSE stream stays.
  server.on("timeout", (socket: Socket) => {
    if ((busy.get(socket) ?? 0) > 0) return;
    silenced++;
    socket.destroy();
  });
  return { open: () => open, refused: () => refused, silenced: () => silenced };
}

/** The bounds of a `BodyBudget`. */
export interface BodyBudgetLimits {
  /** Body bytes held at once, all requests together. */
  maxBytes: number;
  /** Body bytes held at once by one client's requests. */
  maxBytesPerClient: number;
}

/**
 * The bytes of request bodies held in memory while they are read, per client and in total: a read
 * takes bytes as they arrive and gives them back when its body is parsed or refused.
 */
export class BodyBudget {
  readonly #limits: BodyBudgetLimits;
  readonly #perClient = new Map<string, number>();
  #held = 0;
  #peak = 0;

  /** @param limits the total and per-client bounds */
  constructor(limits: BodyBudgetLimits) {
    this.#limits = limits;
  }

  /** Bytes held now. */
  get held(): number {
    return this.#held;
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /**
   * Takes `bytes` for a client's read, unless that would pass a bound.
   * @returns whether they were taken
   */
  take(client: string, bytes: number): boolean {
    const mine = this.#perClient.get(client) ?? 0;
    if (this.#held + bytes > this.#limits.maxBytes || mine + bytes > this.#limits.maxBytesPerClient) {
      return false;
    }
    this.#held += bytes;
    this.#peak = Math.max(this.#peak, this.#held);
    this.#perClient.set(client, mine + bytes);
    return true;
  }

  /** Gives back bytes a client's read took. */
  give(client: string, bytes: number): void {
    if (bytes <= 0) return;
    this.#held -= bytes;
    const left = (this.#perClient.get(client) ?? bytes) - bytes;
    if (left > 0) this.#perClient.set(client, left);
    else this.#perClient.delete(client);
  }
}
