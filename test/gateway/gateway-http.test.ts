import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpOptions,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { createLab, type Lab } from "./gateway-harness.js";
import {
  connectHttpClient,
  initializeBody,
  MCP_POST_HEADERS,
  messagesOf,
  rawRequest,
  textOf,
} from "./http-client.js";

// The lab source offers no download (no artifact-plan tool): no artifact built-ins beside tool_search.
const BUILTINS = ["tool_search"];
const TOKEN = "s3cret-token-of-32-characters-xx";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
let http: GatewayHttpServer | undefined;
afterEach(async () => {
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
  http = undefined;
  gateway = undefined;
  lab = undefined;
});

async function serve(options: GatewayHttpOptions = {}, eager = false) {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, eager });
  http = await serveGatewayHttp(gateway, { onError: () => {}, ...options });
  return { lab, gateway, http };
}

describe("serveGatewayHttp: the SDK client over Streamable HTTP", () => {
  test("lists, loads with tool_search (list_changed in the POST stream), calls with citations, one ledger row for its own gateway:<uuid>", async () => {
    const { lab, gateway, http } = await serve();
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const a = await connectHttpClient(http.url);
    expect(a.mcpSessionId).toMatch(/^[0-9a-f-]{36}$/);
    const sessionId = governanceIdOf(gateway);
    // The governance id is not derived from the transport's: rows and pages never show the latter.
    expect(sessionId).toMatch(/^gateway:[0-9a-f-]{36}$/);
    expect(sessionId).not.toContain(a.mcpSessionId);
    expect(await a.toolNames()).toEqual(BUILTINS);
    expect(a.client.getInstructions()).toContain("mcp__lab__search");

    const found = await a.call("tool_search", { query: "select:mcp__lab__search" });
    expect(found.structuredContent).toMatchObject({ results: [{ name: "mcp__lab__search" }] });
    // Sent related to the request: it travels on that POST's SSE stream, before the answer.
    expect(a.listChanged()).toBe(1);
    expect(await a.toolNames()).toEqual([...BUILTINS, "mcp__lab__search"]);

    const result = await a.call("mcp__lab__search", { query: "brca1" });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain("[1] [demo:brca1](https://example.org/r/brca1) Record brca1");
    expect(result.structuredContent).toMatchObject({
      sourceId: "lab",
      records: [{ primaryCitation: { url: "https://example.org/r/brca1" } }],
    });
    expect(lab.calls.search).toBe(1);
    const rows = await lab.governance.ledger.query({ sessionId });
    expect(rows).toMatchObject([
      {
        invocationId: result.structuredContent?.mcpInvocationId,
        threadId: sessionId,
        sourceId: "lab",
        toolId: "search",
        status: "ok",
      },
    ]);
    await a.client.close();
  });

  test("a catalog change reaches the client on its GET stream (eager: the new tool is listed)", async () => {
    const { lab, http } = await serve({}, true);
    const a = await connectHttpClient(http.url);
    expect(await a.toolNames()).not.toContain("mcp__lab__late");
    lab.addLateTool();
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    expect(await a.toolNames()).toContain("mcp__lab__late");
    await a.client.close();
  });

  test("two concurrent sessions see neither each other's promotions nor each other's grants", async () => {
    const { lab, gateway, http } = await serve();
    const a = await connectHttpClient(http.url);
    const sessionA = governanceIdOf(gateway);
    const b = await connectHttpClient(http.url);
    const sessionB = governanceIdOf(gateway, [sessionA]);
    expect(a.mcpSessionId).not.toBe(b.mcpSessionId);
    expect(http.sessionCount()).toBe(2);

    await a.call("tool_search", { query: "select:mcp__lab__search,mcp__lab__write" });
    expect(await a.toolNames()).toEqual([...BUILTINS, "mcp__lab__search", "mcp__lab__write"]);
    expect(await b.toolNames()).toEqual(BUILTINS);
    expect(b.listChanged()).toBe(0);
    expect((await b.call("mcp__lab__search", { query: "x" })).structuredContent).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      data: { reason: "not_promoted" },
    });

    // A person allowed A's writes (a session grant); B loads the tool but has no grant.
    const request = createAuthorizationRequest(lab.governance.catalog, {
      sourceId: "lab",
      toolId: "write",
      input: { query: "x" },
      sessionId: sessionA,
      toolCallId: "person-1",
    });
    const decided = await lab.governance.permissions.decide(request, { decision: "allow_matching" });
    expect(decided.grant).toBeDefined();
    await b.call("tool_search", { query: "select:mcp__lab__write" });
    expect((await a.call("mcp__lab__write", { query: "y" })).isError).toBeUndefined();
    expect((await b.call("mcp__lab__write", { query: "y" })).structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(lab.calls.write).toBe(1);
    expect(await lab.governance.permissions.listGrants({ sessionId: sessionB })).toEqual([]);
    expect(await lab.governance.permissions.listGrants({ sessionId: sessionA })).toHaveLength(1);
    await Promise.all([a.client.close(), b.client.close()]);
  });

  test("DELETE ends the session: the gateway forgets it and its id gets 404 Session not found", async () => {
    const { gateway, http } = await serve();
    const a = await connectHttpClient(http.url);
    const [session] = gateway.sessions();
    await a.transport.terminateSession();
    await session?.ended;
    expect(gateway.sessions()).toEqual([]);
    expect(http.sessionCount()).toBe(0);
    const again = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, "Mcp-Session-Id": a.mcpSessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(again).toMatchObject({
      status: 404,
      json: { error: { code: -32001, message: "Session not found" } },
    });
    await a.client.close();
  });

  test("an idle session expires after idleTimeoutMs; a running call holds it open until it ends", async () => {
    const clock = new ManualClock(0);
    const { lab, gateway, http } = await serve({ clock, idleTimeoutMs: 60_000 }, true);
    const a = await connectHttpClient(http.url);
    await clock.advance(59_000);
    expect(await a.toolNames()).toContain("mcp__lab__slow");

    const controller = new AbortController();
    const running = a.call("mcp__lab__slow", { query: "x" }, controller.signal);
    running.catch(() => undefined);
    await lab.slowStarted;
    await clock.advance(120_000);
    expect(http.sessionCount()).toBe(1);
    controller.abort("the user stopped it");
    await expect(running).rejects.toThrow();
    await lab.slowAborted;

    await clock.advance(59_000);
    expect(http.sessionCount()).toBe(1);
    await vi.waitFor(async () => {
      await clock.advance(1_001);
      expect(http.sessionCount()).toBe(0);
    });
    expect(gateway.sessions()).toEqual([]);
    const expired = a.client.listTools();
    await expect(expired).rejects.toBeInstanceOf(StreamableHTTPError);
    await expect(expired).rejects.toMatchObject({ code: 404 });
    // The client starts over with a new session.
    const again = await connectHttpClient(http.url);
    expect(again.mcpSessionId).not.toBe(a.mcpSessionId);
    await Promise.all([a.client.close(), again.client.close()]);
  });

  test("close() cancels a running call (audited CANCELLED) and closes every session; the runtime stays open", async () => {
    const { lab, gateway, http } = await serve({}, true);
    const a = await connectHttpClient(http.url);
    const sessionId = governanceIdOf(gateway);
    const running = a.call("mcp__lab__slow", { query: "x" });
    running.catch(() => undefined);
    await lab.slowStarted;
    await http.close();
    // Answered before the session closes: the client is not left waiting for its request timeout.
    await expect(running).rejects.toThrow("The gateway is shutting down");
    expect(gateway.sessions()).toEqual([]);
    await vi.waitFor(async () => {
      const rows = await lab.governance.ledger.query({ sessionId });
      expect(rows).toMatchObject([{ toolId: "slow", status: "error", error: { code: "CANCELLED" } }]);
    });
    expect((await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() })).status).toBe(
      0,
    );
    await a.client.close();
  });
});

describe("serveGatewayHttp: start-up refusals", () => {
  test.each([
    ["a wildcard bind without a token", { host: "0.0.0.0" }, "SCIENCEGATE_GATEWAY_TOKEN"],
    ["a named host without a token", { host: "gateway.example.org" }, "SCIENCEGATE_GATEWAY_TOKEN"],
    ["a token shorter than 16 characters", { token: "short" }, "at least 16"],
    ["an allowed origin that is not one", { allowedOrigins: ["localhost:6274"] }, "not an http(s) origin"],
    ["a port out of range", { port: 70_000 }, "0 to 65535"],
    ["a body cap of zero", { maxBodyBytes: 0 }, "maxBodyBytes"],
  ])("%s is INVALID_CONFIG before anything listens", async (_name, options, message) => {
    lab = await createLab();
    gateway = createGatewayServer({ governance: lab.governance });
    await expect(serveGatewayHttp(gateway, options)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining(message),
    });
  });

  test("a port in use is INVALID_CONFIG naming the address", async () => {
    const { gateway, http } = await serve();
    const port = Number(new URL(http.url).port);
    await expect(serveGatewayHttp(gateway, { port })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining(`127.0.0.1:${port} (EADDRINUSE)`),
    });
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry?.family === "IPv4" && !entry.internal)?.address;
  test.skipIf(external === undefined)(
    "the machine's non-loopback address needs the token; with it, clients that send it are served",
    async () => {
      lab = await createLab();
      gateway = createGatewayServer({ governance: lab.governance });
      await expect(serveGatewayHttp(gateway, { host: external })).rejects.toMatchObject({
        code: "INVALID_CONFIG",
        message: expect.stringContaining("SCIENCEGATE_GATEWAY_TOKEN"),
      });
      http = await serveGatewayHttp(gateway, { host: external, token: TOKEN, onError: () => {} });
      expect(http.url).toBe(`http://${external}:${new URL(http.url).port}/mcp`);
      expect((await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() })).status).toBe(
        401,
      );
      const a = await connectHttpClient(http.url, TOKEN);
      expect(await a.toolNames()).toEqual(BUILTINS);
      // Bound to that address only: a loopback Host names another server.
      const loopback = await rawRequest(http.url, {
        headers: {
          ...MCP_POST_HEADERS,
          Authorization: `Bearer ${TOKEN}`,
          Host: `localhost:${new URL(http.url).port}`,
        },
        body: initializeBody(),
      });
      expect(loopback.status).toBe(403);
      await a.client.close();
    },
  );

  test("a host name in allowedHosts passes the Host check (a DNS name, a proxy's name)", async () => {
    const { http } = await serve({ allowedHosts: ["Gateway.Example.org"] });
    const named = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, Host: "gateway.example.org:443" },
      body: initializeBody(),
    });
    expect(named.status).toBe(200);
    const other = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, Host: "example.org" },
      body: initializeBody(),
    });
    expect(other.status).toBe(403);
  });

  test("a wildcard bind with a token serves loopback clients that send it", async () => {
    const { http } = await serve({ host: "0.0.0.0", token: TOKEN });
    const port = new URL(http.url).port;
    const url = `http://127.0.0.1:${port}/mcp`;
    expect((await rawRequest(url, { headers: MCP_POST_HEADERS, body: initializeBody() })).status).toBe(401);
    const a = await connectHttpClient(url, TOKEN);
    expect(await a.toolNames()).toEqual(BUILTINS);
    await a.client.close();
  });
});

describe("serveGatewayHttp: each refusal, and the server keeps serving", () => {
  const init = { headers: MCP_POST_HEADERS, body: initializeBody() };
  const withToken = (headers: Record<string, string> = {}) => ({
    ...MCP_POST_HEADERS,
    Authorization: `Bearer ${TOKEN}`,
    ...headers,
  });
  const big = (size: number) =>
    JSON.stringify({ jsonrpc: "2.0", method: "ping", id: 1, pad: "x".repeat(size) });

  test.each<[string, (session: string) => Parameters<typeof rawRequest>[1], number, Record<string, unknown>]>(
    [
      ["no token", () => init, 401, { error: { message: expect.stringContaining("Authorization: Bearer") } }],
      [
        "a wrong token of the same length",
        () => ({
          ...init,
          headers: { ...MCP_POST_HEADERS, Authorization: `Bearer ${"x".repeat(TOKEN.length)}` },
        }),
        401,
        { error: { message: "Unauthorized: the bearer token is not valid" } },
      ],
      [
        "another scheme",
        () => ({ ...init, headers: { ...MCP_POST_HEADERS, Authorization: `Basic ${TOKEN}` } }),
        401,
        {},
      ],
      [
        "a foreign Origin",
        () => ({ ...init, headers: withToken({ Origin: "https://evil.example" }) }),
        403,
        { error: { message: "Invalid Origin header: https://evil.example" } },
      ],
      [
        "a rebinding Host",
        () => ({ ...init, headers: withToken({ Host: "evil.example:80" }) }),
        403,
        { error: { message: "Invalid Host header: evil.example:80" } },
      ],
      [
        "a body over the cap (Content-Length)",
        (session) => ({ headers: withToken({ "Mcp-Session-Id": session }), body: big(70_000) }),
        413,
        { error: { message: "Payload Too Large: Request body must not exceed 65536 bytes" } },
      ],
      [
        "a body over the cap (chunked, no length)",
        (session) => ({
          headers: withToken({ "Mcp-Session-Id": session }),
          body: big(2_000_000),
          chunked: true,
        }),
        413,
        { error: { code: -32000 } },
      ],
      [
        "malformed JSON",
        (session) => ({ headers: withToken({ "Mcp-Session-Id": session }), body: '{"jsonrpc":"2.0",' }),
        400,
        { error: { code: -32700, message: "Parse error: Invalid JSON" } },
      ],
      [
        "JSON that is not JSON-RPC (to a session)",
        (session) => ({ headers: withToken({ "Mcp-Session-Id": session }), body: '{"hello":"world"}' }),
        400,
        { error: { code: -32700 } },
      ],
      [
        "JSON that is not JSON-RPC (no session)",
        () => ({ headers: withToken(), body: "[1, 2, 3]" }),
        400,
        { error: { code: -32700 } },
      ],
      [
        "a request other than initialize without a session id",
        () => ({
          headers: withToken(),
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        }),
        400,
        { error: { message: "Bad Request: Mcp-Session-Id header is required" } },
      ],
      [
        "an unknown session id",
        () => ({
          headers: withToken({ "Mcp-Session-Id": "nope" }),
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        }),
        404,
        { error: { code: -32001, message: "Session not found" } },
      ],
      [
        "the wrong content type",
        (session) => ({
          headers: withToken({ "Mcp-Session-Id": session, "Content-Type": "text/plain" }),
          body: "{}",
        }),
        415,
        { error: { message: "Unsupported Media Type: Content-Type must be application/json" } },
      ],
      [
        "a batch with initialize and another request",
        () => ({
          headers: withToken(),
          body: `[${initializeBody(1)}, {"jsonrpc":"2.0","id":2,"method":"ping"}]`,
        }),
        400,
        { error: { code: -32600, message: "Invalid Request: Only one initialization request is allowed" } },
      ],
      [
        "an Accept header without text/event-stream on initialize",
        () => ({ headers: withToken({ Accept: "application/json" }), body: initializeBody() }),
        406,
        { error: { code: -32000 } },
      ],
      ["another path", () => ({ method: "GET", path: "/admin", headers: withToken() }), 404, {}],
      ["another method", () => ({ method: "PUT", headers: withToken(), body: "{}" }), 405, {}],
    ],
  )("%s: refused, and the server keeps serving", async (_name, attack, status, body) => {
    const { gateway, http } = await serve({ token: TOKEN, maxBodyBytes: 65_536 });
    const a = await connectHttpClient(http.url, TOKEN);
    const response = await rawRequest(http.url, attack(a.mcpSessionId));
    expect(response.status).toBe(status);
    expect(response.json).toMatchObject({ jsonrpc: "2.0", id: null, ...body });
    if (status === 401) expect(response.headers["www-authenticate"]).toMatch(/^Bearer /);
    expect(gateway.sessions()).toHaveLength(1);
    expect(await a.toolNames()).toEqual(BUILTINS);
    const b = await connectHttpClient(http.url, TOKEN);
    expect(await b.toolNames()).toEqual(BUILTINS);
    expect(http.sessionCount()).toBe(2);
    await Promise.all([a.client.close(), b.client.close()]);
  });

  test("bytes that are not HTTP, and a client that leaves mid-body, do not stop the server", async () => {
    const { http } = await serve({ token: TOKEN });
    const a = await connectHttpClient(http.url, TOKEN);
    const port = Number(new URL(http.url).port);
    const garbage = await rawSocket(port, "\x00\x01 NOT HTTP AT ALL\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    await rawSocket(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${a.mcpSessionId}\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
      { leave: true },
    );
    expect(await a.toolNames()).toEqual(BUILTINS);
    expect(http.sessionCount()).toBe(1);
    await a.client.close();
  });

  test("a JSON-RPC batch of requests to a session is answered per the SDK (both responses)", async () => {
    const { http } = await serve({ token: TOKEN });
    const a = await connectHttpClient(http.url, TOKEN);
    const response = await rawRequest(http.url, {
      headers: withToken({ "Mcp-Session-Id": a.mcpSessionId }),
      body: '[{"jsonrpc":"2.0","id":"p1","method":"ping"},{"jsonrpc":"2.0","id":"p2","method":"tools/list"}]',
    });
    expect(response.status).toBe(200);
    const ids = messagesOf(response).map((message) => (message as { id?: unknown }).id);
    expect(ids.sort()).toEqual(["p1", "p2"]);
    await a.client.close();
  });

  test("an allowed origin passes with CORS headers and its preflight is answered; same-origin loopback needs no listing", async () => {
    const origin = "http://localhost:6274";
    const { http } = await serve({ allowedOrigins: [origin] });
    const preflight = await rawRequest(http.url, {
      method: "OPTIONS",
      headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe(origin);
    expect(preflight.headers["access-control-allow-headers"]).toContain("Mcp-Session-Id");
    const first = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, Origin: origin },
      body: initializeBody(),
    });
    expect(first.status).toBe(200);
    expect(first.headers["access-control-allow-origin"]).toBe(origin);
    expect(first.headers["access-control-expose-headers"]).toContain("Mcp-Session-Id");
    expect(first.headers["mcp-session-id"]).toMatch(/^[0-9a-f-]{36}$/);
    // Same-origin loopback is allowed without being listed.
    const port = new URL(http.url).port;
    const second = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, Origin: `http://localhost:${port}` },
      body: initializeBody(),
    });
    expect(second.status).toBe(200);
    expect(http.sessionCount()).toBe(2);
  });
});

/**
 * The governance id of the gateway's one session not in `known` (a client cannot learn it from the
 * transport: the two ids are unrelated).
 */
function governanceIdOf(gateway: GatewayServer, known: readonly string[] = []): string {
  const ids = gateway.sessions().map((session) => session.sessionId);
  const fresh = ids.filter((id) => !known.includes(id));
  expect(fresh).toHaveLength(1);
  return fresh[0] as string;
}

/**
 * Writes bytes on a raw connection; resolves with what the server answered once it closes, or at once
 * after writing when `leave` (the client goes away mid-request).
 */
function rawSocket(port: number, bytes: string, options: { leave?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(bytes);
      if (options.leave) {
        socket.destroy();
        resolve("");
      }
    });
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(answer));
  });
}
