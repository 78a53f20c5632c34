import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import type { TransportKind } from "../../src/config/types.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serverConfig } from "./server-configs.js";

const HEADER = "x-sciencegate-test";

function echoServer(): McpServer {
  const mcp = new McpServer({ name: "loopback", version: "1.0.0" });
  mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text: `echo: ${text}` }],
  }));
  return mcp;
}

/** A loopback MCP server over streamable HTTP (one session per initialize) or SSE. */
async function loopback(kind: Exclude<TransportKind, "stdio">) {
  const seenHeaders: (string | undefined)[] = [];
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    seenHeaders.push(req.headers[HEADER] as string | undefined);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (kind === "http" && url.pathname === "/mcp") {
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      let transport = sessionId ? streamable.get(sessionId) : undefined;
      if (!transport) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void streamable.set(id, created),
        });
        await echoServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    } else if (kind === "sse" && req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sse.set(transport.sessionId, transport);
      await echoServer().connect(transport);
    } else if (kind === "sse" && req.method === "POST" && url.pathname === "/messages") {
      await sse.get(url.searchParams.get("sessionId") ?? "")?.handlePostMessage(req, res);
    } else {
      res.writeHead(404).end();
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url: `http://127.0.0.1:${port}${kind === "sse" ? "/sse" : "/mcp"}`, seenHeaders, stop };
}

describe.each(["http", "sse"] as const)("ServerPool over %s on loopback", (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test("lists and calls tools, sending the configured headers on every request", async () => {
    const server = await loopback(kind);
    cleanups.push(server.stop);
    const config = serverConfig({
      id: "remote",
      transport: kind,
      url: server.url,
      headers: { [HEADER]: "secret-123" },
    });
    const pool = new ServerPool([config]);
    cleanups.push(() => pool.close());

    expect((await pool.listTools("remote")).map((tool) => tool.name)).toEqual(["echo"]);
    expect(await pool.callTool("remote", "echo", { text: "hi" })).toMatchObject({
      content: [{ text: "echo: hi" }],
    });
    expect(pool.state("remote")).toMatchObject({ status: "connected", transport: kind, starts: 1 });
    expect(pool.state("remote").stderrTail).toBeUndefined();
    expect(server.seenHeaders.length).toBeGreaterThanOrEqual(3);
    expect(new Set(server.seenHeaders)).toEqual(new Set(["secret-123"]));
  });

  test("a server that goes away fails the call as UPSTREAM_UNAVAILABLE and marks the server failed", async () => {
    const server = await loopback(kind);
    const pool = new ServerPool([serverConfig({ id: "remote", transport: kind, url: server.url })]);
    cleanups.push(() => pool.close());
    await pool.listTools("remote");
    await server.stop();
    const error = await pool.callTool("remote", "echo", { text: "hi" }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toMatchObject({ name: "GovernanceError", code: "UPSTREAM_UNAVAILABLE", retryable: true });
    expect((error as Error).message).toContain("'remote'");
    expect(pool.state("remote").status).toBe("failed");
  });
});

test("an unreachable HTTP server fails to start with UPSTREAM_UNAVAILABLE naming the server", async () => {
  const server = await loopback("http");
  await server.stop(); // the port is now closed
  const pool = new ServerPool([serverConfig({ id: "gone", transport: "http", url: server.url })]);
  const error = await pool.listTools("gone").then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
  expect((error as Error).message).toMatch(/'gone' could not be started.*(ECONNREFUSED|fetch failed)/);
  expect(pool.state("gone")).toMatchObject({ status: "failed", starts: 1 });
  await pool.close();
});
