/**
 * `EventStreamFetch`: an HTTP transport's event stream is read as before (events, headers, redirects,
 * tool-list changes through a real `ServerPool`) but its socket counts as the process's work only while
 * held; every other request goes to the base fetch.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { EventStreamFetch } from "../../src/mcp/event-stream-fetch.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serverConfig } from "./server-configs.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sockets that keep this process alive right now. */
const refedSockets = () => process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;

const streamInit = (headers: Record<string, string> = {}): RequestInit => ({
  method: "GET",
  headers: { Accept: "text/event-stream", ...headers },
  redirect: "manual",
});

describe("EventStreamFetch", () => {
  test("a stream's events and headers arrive; its socket keeps the process alive only while held", async () => {
    const seen: { header?: string | undefined; closed: boolean } = { closed: false };
    const base = await listen((req, res) => {
      seen.header = req.headers["x-test"] as string | undefined;
      res.writeHead(200, { "content-type": "text/event-stream", "x-answer": "yes" });
      res.write("event: message\ndata: hello\n\n");
      req.socket.once("close", () => {
        seen.closed = true;
      });
    });
    const streams = new EventStreamFetch();
    const response = await streams.fetch(`${base}/stream`, streamInit({ "x-test": "sent" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-answer")).toBe("yes");
    expect(seen.header).toBe("sent");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    expect(Buffer.from(value ?? []).toString()).toBe("event: message\ndata: hello\n\n");
    // The server's end of the connection is this process's too: only the client's end changes, and
    // that it is counted once held shows it was not before.
    const open = refedSockets();
    const release = streams.hold();
    expect(refedSockets()).toBe(open + 1);
    const again = streams.hold();
    release();
    expect(refedSockets()).toBe(open + 1);
    again();
    again();
    expect(refedSockets()).toBe(open);
    await reader.cancel();
    for (let i = 0; i < 100 && !seen.closed; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.closed).toBe(true);
  });

  test("a stream opened while held is counted until the release", async () => {
    const base = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
    });
    const streams = new EventStreamFetch();
    const release = streams.hold();
    const response = await streams.fetch(`${base}/stream`, streamInit());
    const held = refedSockets();
    release();
    expect(refedSockets()).toBe(held - 1);
    await response.body?.cancel();
  });

  test("a redirect is returned as it is, not followed", async () => {
    const paths: string[] = [];
    const base = await listen((req, res) => {
      paths.push(req.url ?? "");
      res.writeHead(307, { location: "/elsewhere" }).end();
    });
    const response = await new EventStreamFetch().fetch(`${base}/stream`, streamInit());
    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("/elsewhere");
    expect(paths).toEqual(["/stream"]);
  });

  test.each([
    ["a POST", { method: "POST", headers: { Accept: "text/event-stream" }, redirect: "manual" }],
    [
      "a GET without event-stream",
      { method: "GET", headers: { Accept: "application/json" }, redirect: "manual" },
    ],
    ["a GET left to follow redirects", { method: "GET", headers: { Accept: "text/event-stream" } }],
  ] as [string, RequestInit][])("%s goes to the base fetch", async (_name, init) => {
    const sent: RequestInit[] = [];
    const streams = new EventStreamFetch(async (_url, given) => {
      sent.push(given ?? {});
      return new Response("base");
    });
    const response = await streams.fetch("http://127.0.0.1:1/never", init);
    expect(await response.text()).toBe("base");
    expect(sent).toEqual([init]);
  });

  test("a connection that ends without an answer (a 101 nobody asked for) rejects, never hangs", async () => {
    const server = createNetServer((socket) => {
      socket.once("data", () =>
        socket.end("HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n"),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    await expect(
      new EventStreamFetch().fetch(`http://127.0.0.1:${port}/stream`, streamInit()),
    ).rejects.toThrow("closed before an answer");
  });

  test("an aborted stream request rejects", async () => {
    const base = await listen(() => {
      // never answers
    });
    const controller = new AbortController();
    const pending = new EventStreamFetch().fetch(`${base}/stream`, {
      ...streamInit(),
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});

/** An MCP server over streamable HTTP (`/mcp`) and SSE (`/sse`) whose tool the test can change. */
async function changingServer() {
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const tools: { update(change: { description: string }): void }[] = [];
  const mcpServer = () => {
    const mcp = new McpServer({ name: "changing", version: "1.0.0" });
    tools.push(
      mcp.registerTool(
        "echo",
        { description: "v1", inputSchema: { text: z.string() } },
        async ({ text }) => ({
          content: [{ type: "text", text }],
        }),
      ),
    );
    return mcp;
  };
  const base = await listen((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (url.pathname === "/sse") {
        const transport = new SSEServerTransport("/messages", res);
        sse.set(transport.sessionId, transport);
        await mcpServer().connect(transport);
      } else if (url.pathname === "/messages") {
        await sse.get(url.searchParams.get("sessionId") ?? "")?.handlePostMessage(req, res);
      } else {
        const id = req.headers["mcp-session-id"] as string | undefined;
        let transport = id ? streamable.get(id) : undefined;
        if (!transport) {
          const created = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (sessionId) => void streamable.set(sessionId, created),
          });
          await mcpServer().connect(created);
          transport = created;
        }
        await transport.handleRequest(req, res);
      }
    })();
  });
  return { base, tools };
}

describe.each(["http", "sse"] as const)("a ServerPool over %s", (kind) => {
  test("hears a tool-list change on the event stream between calls", async () => {
    const server = await changingServer();
    const pool = new ServerPool([
      serverConfig({
        id: "remote",
        transport: kind,
        url: `${server.base}/${kind === "sse" ? "sse" : "mcp"}`,
      }),
    ]);
    cleanups.push(() => pool.close());
    expect((await pool.listTools("remote")).map((tool) => tool.description)).toEqual(["v1"]);
    const changed = new Promise<string>((resolve) => pool.onToolsChanged(resolve));
    // The standalone GET stream opens just after initialize: wait until the server has it.
    for (let i = 0; i < 100; i++) {
      // Every server instance: a revision probe (protocol auto) made one of its own before the session's.
      for (const tool of server.tools) tool.update({ description: `v${i + 2}` });
      const winner = await Promise.race([changed, new Promise((resolve) => setTimeout(resolve, 50))]);
      if (winner === "remote") break;
    }
    expect(await changed).toBe("remote");
    expect((await pool.listTools("remote"))[0]?.description).not.toBe("v1");
  });
});
