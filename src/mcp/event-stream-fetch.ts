/**
 * The `fetch` of the HTTP transports, with their long-lived event streams (the streamable HTTP
 * transport's standalone GET stream, the SSE transport's stream) on sockets that keep the process alive
 * only while a request waits on the transport. The global `fetch` keeps a socket alive as long as a
 * response body is open, i.e. forever for such a stream, so a script that never closed its runtime never
 * exited (see ARCHITECTURE.md, "State: who owns what").
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** Statuses whose response has no body (`Response` refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A `fetch` for one HTTP transport: an event-stream GET (`Accept: text/event-stream`, `redirect:
 * "manual"`, as the SDK sends it) goes over a socket of its own, unref'd unless `hold()` is in effect;
 * every other request goes to the base fetch, whose idle keep-alive sockets never keep the process
 * alive. Redirects of a stream are returned as they are (the SDK follows them within the origin).
 */
export class EventStreamFetch {
  readonly #base: FetchLike;
  readonly #sockets = new Set<Socket>();
  #holds = 0;

  /**
   * @param base the fetch of every other request @default the global `fetch`
   */
  constructor(base: FetchLike = (url, init) => fetch(url, init)) {
    this.#base = base;
  }

  /** The fetch to hand the transport. */
  readonly fetch: FetchLike = (url, init) =>
    isEventStreamRequest(init) ? this.#openStream(new URL(url), init) : this.#base(url, init);

  /**
   * Keeps the streams' sockets (those open and those opened meanwhile) counted as the process's work
   * until released: an answer may arrive on a stream (always over SSE; over streamable HTTP when a call's
   * own stream was resumed).
   * @returns the release (idempotent)
   */
  hold(): () => void {
    if (++this.#holds === 1) for (const socket of this.#sockets) socket.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) for (const socket of this.#sockets) socket.unref();
    };
  }

  #openStream(url: URL, init: RequestInit): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
        method: "GET",
        headers: Object.fromEntries(new Headers(init.headers)),
        // A connection of its own, closed with the stream: never handed to another request.
        agent: false,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      request.once("socket", (socket: Socket) => {
        this.#sockets.add(socket);
        if (this.#holds === 0) socket.unref();
        socket.once("close", () => this.#sockets.delete(socket));
      });
      request.once("error", reject);
      // A connection that ends without an answer (a 101 nobody asked for, say): no later settling is
      // coming, and once answered this is a no-op.
      request.once("close", () =>
        reject(new Error(`The event stream to ${url.origin} closed before an answer.`)),
      );
      request.once("response", (message) => {
        try {
          resolve(toResponse(message));
        } catch (error) {
          message.destroy();
          reject(error);
        }
      });
      request.end();
    });
  }
}

/** The SDK's event-stream GET: the one kind of request whose body stays open between calls. */
function isEventStreamRequest(init: RequestInit | undefined): init is RequestInit {
  if (init === undefined || init.redirect !== "manual") return false;
  if ((init.method ?? "GET").toUpperCase() !== "GET") return false;
  return new Headers(init.headers).get("accept")?.includes("text/event-stream") ?? false;
}

function toResponse(message: IncomingMessage): Response {
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header `fetch` would not hand over either (a forbidden name or value): left out.
    }
  }
  const status = message.statusCode ?? 502;
  const init = { status, statusText: message.statusMessage ?? "", headers };
  if (NULL_BODY_STATUSES.has(status)) {
    message.resume();
    return new Response(null, init);
  }
  return new Response(Readable.toWeb(message) as ReadableStream<Uint8Array>, init);
}
