/**
 * The gateway over Streamable HTTP: one Node `http` server, one SDK `StreamableHTTPServerTransport` and
 * one `GatewaySession` per MCP session id, behind the checks of `gateway-http-guard.ts` (see
 * ARCHITECTURE.md, "The governed MCP gateway").
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isInitializeRequest, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { GatewayServer } from "./create-gateway-server.js";
import { assertSafeBind, createHttpGuard, type HttpRefusal, normalizeOrigin } from "./gateway-http-guard.js";
import { readJsonBody, reply } from "./gateway-http-request.js";
import { GatewayHttpSession } from "./gateway-http-session.js";

/** The one MCP endpoint; every other path is 404. */
const GATEWAY_HTTP_PATH = "/mcp";

/** Options of `serveGatewayHttp`. */
export interface GatewayHttpOptions {
  /** The address to bind. Anything but loopback needs `token`. @default "127.0.0.1" */
  host?: string | undefined;
  /** The port; 0 takes a free one (read it from `url`). @default 0 */
  port?: number | undefined;
  /**
   * The bearer token every request must carry (`Authorization: Bearer <token>`), at least 16
   * characters. @default none: allowed on a loopback bind only
   */
  token?: string | undefined;
  /**
   * Browser origins allowed besides same-origin loopback (`https://app.example.org`); each gets CORS
   * headers. A request without `Origin` (any non-browser client) is not affected. @default none
   */
  allowedOrigins?: readonly string[] | undefined;
  /**
   * Host names a request's `Host` may name besides the bound ones (a DNS name, or the name a reverse
   * proxy forwards). @default the loopback names on a loopback bind, the bound address otherwise, and
   *   every address of the machine on a wildcard bind (`0.0.0.0`, `::`)
   */
  allowedHosts?: readonly string[] | undefined;
  /** Largest request body; a larger one is refused with 413 while it is read. @default 4 MiB */
  maxBodyBytes?: number | undefined;
  /**
   * A session with no request for this long (and none running) is closed and forgotten; its id then
   * gets 404. An open GET stream does not keep a session alive. @default 30 minutes
   */
  idleTimeoutMs?: number | undefined;
  /** Most sessions open at once; one more `initialize` gets 503. @default 100 */
  maxSessions?: number | undefined;
  /** The idle timers' clock. @default the system clock */
  clock?: Clock | undefined;
  /** Receives failures no client can be told about. @default stderr */
  onError?: ((error: unknown) => void) | undefined;
}

/** A listening gateway. */
export interface GatewayHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  url: string;
  /** How many MCP sessions are open. */
  sessionCount(): number;
  /**
   * Stops accepting, closes every session it opened (running calls are cancelled and audited) and every
   * connection. The gateway and the runtime stay open: they are the caller's. Calling it again returns
   * the same promise.
   */
  close(): Promise<void>;
}

const DEFAULTS = { maxBodyBytes: 4 * 1024 * 1024, idleTimeoutMs: 30 * 60_000, maxSessions: 100 };

/**
 * Serves the gateway over Streamable HTTP at `/mcp`. Every request passes the `Host`, `Origin` and
 * token checks first; a POST body is read up to `maxBodyBytes` and must be JSON; an `initialize`
 * without a session id opens a new governance session `gateway:<mcp-session-id>`; `DELETE` ends one.
 * @param gateway the gateway (`createGatewayServer`)
 * @param options bind address, token, allow-lists, limits
 * @returns the listening server, once it listens
 * @throws GovernanceError `INVALID_CONFIG` for a non-loopback bind without a token, a short token, a bad
 *   origin or limit, or an address that cannot be bound (in use, not this machine's)
 * @example
 * const gateway = createGatewayServer(governance);
 * const http = await serveGatewayHttp(gateway, { port: 8080, token: process.env.SCIENCEGATE_GATEWAY_TOKEN });
 * console.error(`listening on ${http.url}`);
 */
export async function serveGatewayHttp(
  gateway: GatewayServer,
  options: GatewayHttpOptions = {},
): Promise<GatewayHttpServer> {
  const settings = resolveGatewayHttpOptions(options);
  const clock = options.clock ?? systemClock;
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.stderr.write(`sciencegate gateway: ${error instanceof Error ? error.message : error}\n`));
  const sessions = new Map<string, GatewayHttpSession>();
  let closing = false;

  const forget = (entry: GatewayHttpSession) => {
    if (sessions.get(entry.id) === entry) sessions.delete(entry.id);
  };
  const end = (entry: GatewayHttpSession, reason: string) => {
    forget(entry);
    return entry.close(reason).catch(onError);
  };

  const open = async (request: IncomingMessage, response: ServerResponse, message: unknown) => {
    if (sessions.size >= settings.maxSessions) {
      return reply(response, {
        status: 503,
        code: -32000,
        message: `Too many sessions: this gateway serves at most ${settings.maxSessions}; end one (DELETE) or retry later`,
        headers: { "Retry-After": "60" },
      });
    }
    const entry = new GatewayHttpSession({
      id: randomUUID(),
      clock,
      idleTimeoutMs: settings.idleTimeoutMs,
      onIdle: (idle) => void end(idle, "The session expired after being idle"),
    });
    // Held under its id at once: it counts towards the bound while it connects, and `initialize` is
    // answered before `handle` settles.
    sessions.set(entry.id, entry);
    try {
      const session = await entry.connect(gateway);
      void session.ended.then(() => forget(entry));
    } catch (error) {
      forget(entry);
      onError(error);
      return reply(response, { status: 503, code: -32000, message: "The gateway is shutting down" });
    }
    await entry.handle(request, response, message);
    // The transport refused the initialize (an Accept header, a batch): nothing to keep.
    if (!entry.isInitialized) await end(entry, "The session did not initialize");
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if ((request.url ?? "").split("?", 1)[0] !== GATEWAY_HTTP_PATH) {
      return reply(response, {
        status: 404,
        code: -32000,
        message: `Not found: the MCP endpoint is ${GATEWAY_HTTP_PATH}`,
      });
    }
    const refusal = guard.check(request);
    if (refusal) return reply(response, refusal);
    for (const [name, value] of Object.entries(guard.corsHeaders(request))) response.setHeader(name, value);
    if (request.method === "OPTIONS") return preflight(response);
    if (request.method !== "POST" && request.method !== "GET" && request.method !== "DELETE") {
      return reply(response, {
        status: 405,
        code: -32000,
        message: "Method not allowed.",
        headers: { Allow: "GET, POST, DELETE" },
      });
    }
    if (closing)
      return reply(response, { status: 503, code: -32000, message: "The gateway is shutting down" });
    const sessionId = request.headers["mcp-session-id"];
    const entry = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (sessionId !== undefined && entry === undefined) {
      // Unknown, ended or expired: the client starts a new session.
      return reply(response, { status: 404, code: -32001, message: "Session not found" });
    }
    if (request.method !== "POST") {
      return entry ? entry.handle(request, response) : reply(response, missingSessionId());
    }
    const message = await readJsonBody(request, response, settings.maxBodyBytes);
    if (message === undefined) return;
    if (entry !== undefined) return entry.handle(request, response, message.value);
    const messages = Array.isArray(message.value) ? message.value : [message.value];
    if (!messages.every((one) => JSONRPCMessageSchema.safeParse(one).success)) {
      return reply(response, { status: 400, code: -32700, message: "Parse error: Invalid JSON-RPC message" });
    }
    if (!messages.some(isInitializeRequest)) return reply(response, missingSessionId());
    return open(request, response, message.value);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      onError(error);
      reply(response, { status: 500, code: -32603, message: "Internal error" });
    });
  });
  const address = await listen(server, settings.host, settings.port);
  // A failed accept (too many open files) is reported, never an uncaught 'error' event.
  server.on("error", onError);
  const guard = createHttpGuard({
    host: settings.host,
    port: address.port,
    token: settings.token,
    allowedOrigins: settings.allowedOrigins,
    allowedHosts: settings.allowedHosts,
  });
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closed: Promise<void> | undefined;
  const close = async () => {
    closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([...sessions.values()].map((entry) => end(entry, "The gateway is shutting down")));
    server.closeAllConnections();
    await stopped;
  };
  return {
    url: `http://${host}:${address.port}${GATEWAY_HTTP_PATH}`,
    sessionCount: () => sessions.size,
    close: () => {
      closed ??= close();
      return closed;
    },
  };
}

/** Options with their defaults, checked. */
export interface ResolvedGatewayHttpOptions {
  host: string;
  port: number;
  token: string | undefined;
  allowedOrigins: string[];
  allowedHosts: string[];
  maxBodyBytes: number;
  idleTimeoutMs: number;
  maxSessions: number;
}

/**
 * Checks the options of `serveGatewayHttp` without binding anything (the CLI calls it before it starts
 * the runtime).
 * @param options the options
 * @returns them with their defaults
 * @throws GovernanceError `INVALID_CONFIG` naming the field and the fix
 */
export function resolveGatewayHttpOptions(options: GatewayHttpOptions): ResolvedGatewayHttpOptions {
  const host = options.host?.trim() || "127.0.0.1";
  const token = options.token === "" ? undefined : options.token;
  assertSafeBind(host, token);
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw invalid("port", `Port ${port} is not a port number; use 0 to 65535 (0 takes a free port).`);
  }
  const positive = (field: keyof typeof DEFAULTS) => {
    const value = options[field] ?? DEFAULTS[field];
    if (!Number.isInteger(value) || value <= 0) {
      throw invalid(field, `${field} must be a positive whole number; got ${value}.`);
    }
    return value;
  };
  return {
    host,
    port,
    token,
    allowedOrigins: (options.allowedOrigins ?? []).map(normalizeOrigin),
    allowedHosts: (options.allowedHosts ?? []).map((name) => name.trim()).filter(Boolean),
    maxBodyBytes: positive("maxBodyBytes"),
    idleTimeoutMs: positive("idleTimeoutMs"),
    maxSessions: positive("maxSessions"),
  };
}

function invalid(field: string, message: string): GovernanceError {
  return new GovernanceError("INVALID_CONFIG", message, { data: { field } });
}

async function listen(server: ReturnType<typeof createServer>, host: string, port: number) {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The gateway cannot listen on ${host}:${port} (${error.code ?? error.message}): ${
        error.code === "EADDRINUSE"
          ? "the port is taken; choose another, or 0 for a free one"
          : "bind an address of this machine"
      }.`,
      { data: { field: "host", host, port }, cause: error },
    );
  });
  return server.address() as AddressInfo;
}

function preflight(response: ServerResponse): void {
  response.writeHead(204, {
    "Access-Control-Allow-Methods": "GET, POST, DELETE",
    "Access-Control-Allow-Headers":
      "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
    "Access-Control-Max-Age": "600",
  });
  response.end();
}

function missingSessionId(): HttpRefusal {
  return { status: 400, code: -32000, message: "Bad Request: Mcp-Session-Id header is required" };
}
