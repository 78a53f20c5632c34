/**
 * The gateway over Streamable HTTP: one Node `http` server, one SDK `StreamableHTTPServerTransport` and
 * one `GatewaySession` per MCP session id, behind the checks of `gateway-http-guard.ts` (see
 * ARCHITECTURE.md, "The governed MCP gateway").
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { isLegacyRequest } from "@modelcontextprotocol/server";
import { GovernanceError, systemClock } from "../core/index.js";
import type { GatewayServer } from "./create-gateway-server.js";
import { createHttpGuard, type GatewayPrincipal, type HttpRefusal } from "./gateway-http-guard.js";
import { BodyBudget, limitConnections } from "./gateway-http-limits.js";
import { type GatewayHttpOptions, resolveGatewayHttpOptions } from "./gateway-http-options.js";
import { readJsonBody, reply } from "./gateway-http-request.js";
import { GatewayHttpSession } from "./gateway-http-session.js";
import { oauthAuthenticator } from "./gateway-oauth.js";
import { GatewaySessionTable } from "./gateway-session-table.js";

/** The one MCP endpoint; every other path is 404. */
const GATEWAY_HTTP_PATH = "/mcp";

/** A listening gateway. */
export interface GatewayHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  url: string;
  /** With `oauth`: the URL of the protected resource metadata document (RFC 9728). */
  resourceMetadataUrl?: string | undefined;
  /** How many MCP sessions are open. */
  sessionCount(): number;
  /** The server's resource counters, for monitoring and tests. */
  stats(): GatewayHttpStats;
  /**
   * Stops accepting, closes every session it opened (running calls are cancelled and audited) and every
   * connection. The gateway and the runtime stay open: they are the caller's. Calling it again returns
   * the same promise.
   */
  close(): Promise<void>;
}

/** What a listening gateway holds and has refused. */
export interface GatewayHttpStats {
  /** Connections open now. */
  connections: number;
  /** Connections refused over `maxConnections` / `maxConnectionsPerClient`. */
  connectionsRefused: number;
  /** Connections closed for silence (`headersTimeoutMs`). */
  connectionsSilenced: number;
  /** Request body bytes held now, and the most held at once. */
  bodyBytesHeld: number;
  bodyBytesPeak: number;
  /** Sessions closed to make room for new ones. */
  sessionsEvicted: number;
}

/**
 * Serves the gateway over Streamable HTTP at `/mcp`. Every request passes the `Host` and `Origin`
 * checks and names its principal (the token's holder, `authenticate`, or the loopback client); a POST
 * body is read up to `maxBodyBytes`, within the body budget and deadline, and must be JSON; an
 * `initialize` without a session id opens a new governance session (`gateway:<uuid>`, unrelated to the
 * `Mcp-Session-Id`, which only its principal can use); `DELETE` ends one.
 * @param gateway the gateway (`createGatewayServer`)
 * @param options bind address, token or authenticator, allow-lists, limits
 * @returns the listening server, once it listens
 * @throws GovernanceError `INVALID_CONFIG` for a non-loopback bind without a token, a short token, a bad
 *   origin or limit, or an address that cannot be bound (in use, not this machine's)
 * @example
 * const gateway = createGatewayServer({ governance });
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
  const sessions = new GatewaySessionTable(settings);
  const budget = new BodyBudget({
    maxBytes: settings.maxBufferedBodyBytes,
    maxBytesPerClient: Math.max(settings.maxBodyBytes, Math.floor(settings.maxBufferedBodyBytes / 4)),
  });
  let evictions = 0;
  let closing = false;

  const end = (entry: GatewayHttpSession, reason: string) => {
    sessions.delete(entry);
    return entry.close(reason).catch(onError);
  };

  const open = async (
    request: IncomingMessage,
    response: ServerResponse,
    message: unknown,
    caller: Caller,
  ) => {
    const room = sessions.makeRoom(caller.client, clock.now());
    if ("refusal" in room) return reply(response, room.refusal);
    for (const evicted of room.evicted) {
      evictions++;
      void end(evicted, "The session was closed to make room for a new one (it was idle)");
    }
    const entry = new GatewayHttpSession({
      id: randomUUID(),
      principal: caller.principal,
      client: caller.client,
      clock,
      idleTimeoutMs: settings.idleTimeoutMs,
      unusedTimeoutMs: settings.unusedSessionTimeoutMs,
      onIdle: (idle) => void end(idle, "The session expired after being idle"),
    });
    // Held under its id at once: it counts towards the bounds while it connects, and `initialize` is
    // answered before `handle` settles.
    sessions.add(entry);
    try {
      const session = await entry.connect(gateway);
      void session.ended.then(() => sessions.delete(entry));
    } catch (error) {
      sessions.delete(entry);
      onError(error);
      return reply(response, { status: 503, code: -32000, message: "The gateway is shutting down" });
    }
    await entry.handle(request, response, message);
    // The transport refused the initialize (an Accept header, a batch): nothing to keep.
    if (!entry.isInitialized) await end(entry, "The session did not initialize");
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "").split("?", 1)[0];
    if (oauth?.servesMetadata(path) && request.method === "GET") {
      const refusal = guard.check(request);
      if (refusal) return reply(response, refusal);
      return oauth.sendMetadata(response);
    }
    if (path !== GATEWAY_HTTP_PATH) {
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
    const authenticated = await guard.authenticate(request);
    if ("status" in authenticated) return reply(response, authenticated);
    const { principal } = authenticated;
    const caller: Caller = {
      principal,
      client: `${principal.id} ${request.socket.remoteAddress ?? "unknown"}`,
    };
    const sessionId = request.headers["mcp-session-id"];
    const found = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    // Another principal's session is answered as an unknown one: its id opens nothing for them.
    const entry = found?.principal.id === principal.id ? found : undefined;
    if (sessionId !== undefined && entry === undefined) {
      // Unknown, ended, expired or someone else's: the client starts a new session.
      return reply(response, { status: 404, code: -32001, message: "Session not found" });
    }
    if (request.method !== "POST") {
      return entry ? entry.handle(request, response) : reply(response, missingSessionId());
    }
    const message = await readJsonBody(request, response, {
      maxBytes: settings.maxBodyBytes,
      budget,
      client: caller.client,
      timeoutMs: settings.bodyTimeoutMs,
      clock,
    });
    if (message === undefined) return;
    // The session may have ended (idle, evicted, deleted) while the body was read.
    if (entry !== undefined && sessions.get(entry.id) !== entry) {
      return reply(response, { status: 404, code: -32001, message: "Session not found" });
    }
    const messages = Array.isArray(message.value) ? message.value : [message.value];
    const reused = reusedRequestId(messages, entry);
    if (reused !== undefined) return reply(response, reused);
    if (entry !== undefined) return entry.handle(request, response, message.value);
    if (!messages.every((one) => JSONRPCMessageSchema.safeParse(one).success)) {
      return reply(response, { status: 400, code: -32700, message: "Parse error: Invalid JSON-RPC message" });
    }
    if (!messages.some(isInitializeRequest)) {
      // A 2026-07-28 request has no session: it carries its version and capabilities itself.
      const web = webRequestOf(request, response, message.value);
      if (await isLegacyRequest(web, message.value)) return reply(response, missingSessionId());
      const answer = await gateway.fetchStateless(
        web,
        { user: principal.user, mayApprove: principal.mayApprove ?? true },
        message.value,
      );
      return sendWebResponse(response, answer, onError);
    }
    return open(request, response, message.value, caller);
  };

  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      // Node's own deadline for a whole request, behind the body deadline read on the clock.
      requestTimeout: settings.headersTimeoutMs + settings.bodyTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, settings.headersTimeoutMs),
    },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        onError(error);
        reply(response, { status: 500, code: -32603, message: "Internal error" });
      });
    },
  );
  const connections = limitConnections(server, settings);
  const address = await listen(server, settings.host, settings.port);
  // A failed accept (too many open files) is reported, never an uncaught 'error' event.
  server.on("error", onError);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}${GATEWAY_HTTP_PATH}`;
  // The audience defaults to the URL served: a token issued for any other resource is refused.
  const oauth = options.oauth && oauthAuthenticator(options.oauth, url);
  const guard = createHttpGuard({
    host: settings.host,
    port: address.port,
    token: settings.token,
    authenticate: oauth?.authenticate ?? options.authenticate,
    allowedOrigins: settings.allowedOrigins,
    allowedHosts: settings.allowedHosts,
  });

  let closed: Promise<void> | undefined;
  const close = async () => {
    closing = true;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all(sessions.values().map((entry) => end(entry, "The gateway is shutting down")));
    server.closeAllConnections();
    await stopped;
  };
  return {
    url,
    resourceMetadataUrl: oauth?.server.metadataUrl,
    sessionCount: () => sessions.size,
    stats: () => ({
      connections: connections.open(),
      connectionsRefused: connections.refused(),
      connectionsSilenced: connections.silenced(),
      bodyBytesHeld: budget.held,
      bodyBytesPeak: budget.peak,
      sessionsEvicted: evictions,
    }),
    close: () => {
      closed ??= close();
      return closed;
    },
  };
}

/** Who sent a request: its principal, and the key of its per-client limits (principal and address). */
interface Caller {
  principal: GatewayPrincipal;
  client: string;
}

/**
 * A refusal for a message that reuses a request id: twice in one batch, or one still open in the
 * session. Each would run while only one answer could reach the client.
 */
function reusedRequestId(
  messages: readonly unknown[],
  entry: GatewayHttpSession | undefined,
): HttpRefusal | undefined {
  const seen = new Set<RequestId>();
  for (const [index, message] of messages.entries()) {
    // The SDK's guard parses the whole message: it is asked only of a message whose id is in use, or
    // whose id later ones of the batch are checked against (a fresh single request skips it).
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id !== "string" && typeof id !== "number") continue;
    const inUse = seen.has(id) || entry?.isOpen(id) === true;
    if (!inUse && index === messages.length - 1) continue;
    if (!isJSONRPCRequest(message)) continue;
    if (inUse) {
      return {
        status: 400,
        code: -32600,
        message: `Invalid Request: request id ${JSON.stringify(message.id)} is already in use ${
          seen.has(message.id) ? "in this batch" : "by a request of this session that has not been answered"
        }`,
      };
    }
    seen.add(message.id);
  }
  return undefined;
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
      "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Sciencegate-Conversation, Last-Event-ID",
    "Access-Control-Max-Age": "600",
  });
  response.end();
}

/**
 * A Node request whose body was read already, as the web request the SDK's stateless handler takes
 * (its headers, and the parsed body again); aborted when the client goes away.
 */
function webRequestOf(request: IncomingMessage, response: ServerResponse, body: unknown): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const gone = new AbortController();
  // Once per request (a kept-alive socket serves many): the answer closed, finished or not.
  response.once("close", () => gone.abort());
  return new Request(`http://${request.headers.host ?? "localhost"}${request.url ?? "/"}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: gone.signal,
  });
}

/** Writes a web response (JSON or an SSE stream) to a Node response, chunk by chunk. */
async function sendWebResponse(
  response: ServerResponse,
  answer: Response,
  onError: (error: unknown) => void,
): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  response.writeHead(answer.status, headers);
  if (answer.body === null) {
    response.end();
    return;
  }
  const reader = answer.body.getReader();
  // The client left: stop reading (the SDK aborts the request's handler through its signal).
  response.once("close", () => void reader.cancel().catch(onError));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      response.write(value);
    }
  } catch (error) {
    if (!response.destroyed) onError(error);
  } finally {
    response.end();
  }
}

function missingSessionId(): HttpRefusal {
  return { status: 400, code: -32000, message: "Bad Request: Mcp-Session-Id header is required" };
}
