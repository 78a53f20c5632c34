/**
 * `createListenFirstFetch`: once a streamable HTTP server accepted `notifications/initialized`, no
 * request reaches it before the event stream the SDK opens then has been answered, so what the server
 * sends on that stream (a question asked inside a tool) is not dropped; a stream that is never answered
 * holds requests for `maxWaitMs` at most. Tested on loopback servers, with the real SDK client and server
 * through a `ServerPool`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, test } from "vitest";
import { EventStreamFetch } from "../../src/mcp/event-stream-fetch.js";
import { createListenFirstFetch } from "../../src/mcp/listen-first-fetch.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
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
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const post = (message: object): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify(message),
});
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const CALL = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: {} } };
const STREAM: RequestInit = { method: "GET", headers: { accept: "text/event-stream" }, redirect: "manual" };

/**
 * A server that accepts the initialized notification, answers other POSTs at once, and answers the
 * event stream's GET only when `answerStream` is called; `log` is the order in which things happened.
 */
async function slowStreamServer() {
  const log: string[] = [];
  let answerStream: () => void = () => undefined;
  let arrived: () => void = () => undefined;
  const streamArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const url = await listen((req, res) => {
    if (req.method === "GET") {
      log.push("stream requested");
      answerStream = () => {
        log.push("stream answered");
        res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      };
      arrived();
      return;
    }
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      const message = JSON.parse(body) as { method: string };
      log.push(`${message.method} received`);
      if (message.method === "notifications/initialized") res.writeHead(202).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return { url, log, streamArrived, answer: () => answerStream() };
}

describe("createListenFirstFetch", () => {
  test("after initialized is accepted, a request waits until the event stream is answered", async () => {
    const server = await slowStreamServer();
    const fetch = createListenFirstFetch(new EventStreamFetch().fetch);
    expect((await fetch(server.url, post(INITIALIZED))).status).toBe(202);
    const stream = fetch(server.url, STREAM);
    const call = fetch(server.url, post(CALL));
    await server.streamArrived;
    // The call was sent before the stream was answered, yet it has not reached the server.
    expect(server.log).toEqual(["notifications/initialized received", "stream requested"]);
    server.answer();
    const response = await stream;
    await (await call).text();
    expect(server.log).toEqual([
      "notifications/initialized received",
      "stream requested",
      "stream answered",
      "tools/call received",
    ]);
    await response.body?.cancel();
  });

  test("a stream that is never answered holds requests for maxWaitMs only", async () => {
    const server = await slowStreamServer();
    const clock = new ManualClock();
    const fetch = createListenFirstFetch(new EventStreamFetch().fetch, { clock, maxWaitMs: 500 });
    await fetch(server.url, post(INITIALIZED));
    const controller = new AbortController();
    cleanups.push(() => controller.abort());
    fetch(server.url, { ...STREAM, signal: controller.signal }).catch(() => undefined);
    const call = fetch(server.url, post(CALL));
    await server.streamArrived;
    await clock.advance(499);
    expect(server.log).not.toContain("tools/call received");
    await clock.advance(1);
    await (await call).text();
    expect(server.log).toEqual([
      "notifications/initialized received",
      "stream requested",
      "tools/call received",
    ]);
  });

  test("requests before initialized, and without a 202 for it, are not held", async () => {
    const server = await slowStreamServer();
    const fetch = createListenFirstFetch(new EventStreamFetch().fetch, { clock: new ManualClock() });
    await (await fetch(server.url, post(CALL))).text();
    expect(server.log).toEqual(["tools/call received"]);
  });
});

describe("a server that asks a question on its event stream, which it answers slowly", () => {
  /**
   * A streamable HTTP server whose tool asks for a name with an elicitation that belongs to no request
   * (the SDK server sends it on the standalone event stream, and drops it while none is open), behind a
   * front that passes the event stream's GET on only after `delayMs`.
   */
  async function askingServer(delayMs: number): Promise<string> {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const newSession = async () => {
      const mcp = new McpServer({ name: "asker", version: "1.0.0" }, { capabilities: { tools: {} } });
      mcp.registerTool("ask_name", {}, async () => {
        const answer = await mcp.server.elicitInput({
          message: "Your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string", default: "Ada" } } },
        });
        return { content: [{ type: "text", text: `${answer.action}: ${JSON.stringify(answer.content)}` }] };
      });
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      await mcp.connect(transport);
      cleanups.push(() => mcp.close());
      return transport;
    };
    return listen((req, res) => {
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      const handle = async () => {
        const transport = (sessionId ? sessions.get(sessionId) : undefined) ?? (await newSession());
        await transport.handleRequest(req, res);
      };
      if (req.method === "GET") setTimeout(() => void handle(), delayMs);
      else void handle();
    });
  }

  test("the question reaches the relay and the call ends with its answer", async () => {
    const url = await askingServer(300);
    const pool = new ServerPool([
      serverConfig({ id: "asker", transport: "http", url, protocol: "2025-11-25" }),
    ]);
    cleanups.push(() => pool.close());
    const asked: string[] = [];
    const result = await pool.callTool(
      "asker",
      "ask_name",
      {},
      {
        timeoutMs: 5_000,
        relay: {
          elicit: (params) => {
            asked.push(String(params.message));
            return { action: "accept", content: {} };
          },
        },
      },
    );
    expect(asked).toEqual(["Your name?"]);
    expect(result.content).toEqual([{ type: "text", text: 'accept: {"name":"Ada"}' }]);
  });
});
