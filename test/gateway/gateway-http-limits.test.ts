/**
 * The gateway's HTTP resource bounds against hostile raw clients (node:net) on a loopback port, at small
 * limits so that each attack takes well under a second: unfinished bodies (bytes held), a body that
 * never ends (its deadline), sockets that send nothing, headers that trickle, and too many connections.
 * The same attacks at the default limits run in `test/reliability/gateway-http-hostile.faults.test.ts`.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpOptions,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { createLab, type Lab } from "./gateway-harness.js";
import { connectHttpClient, initializeBody, MCP_POST_HEADERS, rawRequest } from "./http-client.js";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
let http: GatewayHttpServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
  http = undefined;
  gateway = undefined;
  lab = undefined;
});

async function serve(options: GatewayHttpOptions = {}) {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance });
  http = await serveGatewayHttp(gateway, { onError: () => {}, ...options });
  return { http, port: Number(new URL(http.url).port) };
}

/** A raw connection: what it received, whether and when it closed. */
interface RawConnection {
  socket: Socket;
  received(): string;
  closed(): boolean;
  /** Settles when the server closed it (or it failed). */
  ended: Promise<void>;
}

function open(port: number, first?: string | Buffer): Promise<RawConnection> {
  return new Promise((resolve) => {
    let text = "";
    let isClosed = false;
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    const ended = new Promise<void>((done) =>
      socket.once("close", () => {
        isClosed = true;
        done();
      }),
    );
    socket.once("connect", () => {
      if (first !== undefined) socket.write(first);
      resolve({ socket, received: () => text, closed: () => isClosed, ended });
    });
  });
}

/** The head of a POST to `/mcp` declaring `length` bytes of JSON body. */
function postHead(port: number, length: number, extra = ""): string {
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n${extra}\r\n`;
}

describe("request bodies", () => {
  test("unfinished bodies hold at most maxBufferedBodyBytes (and a client a quarter of it); past it a body is refused 503 and its connection closed; a client still gets served", async () => {
    const maxBodyBytes = 256 * 1024;
    const maxBufferedBodyBytes = 1024 * 1024;
    const { http, port } = await serve({ maxBodyBytes, maxBufferedBodyBytes, maxConnectionsPerClient: 100 });
    const size = 200 * 1024;
    const body = Buffer.alloc(size - 1, 0x20);
    // Twelve bodies of 200 KiB, each one byte short of its declared length: 2.4 MiB if all were held.
    const attackers = await Promise.all(
      Array.from({ length: 12 }, () => open(port, Buffer.concat([Buffer.from(postHead(port, size)), body]))),
    );
    await vi.waitFor(() => {
      const refused = attackers.filter((a) => a.received().startsWith("HTTP/1.1 503"));
      expect(refused.length).toBeGreaterThanOrEqual(11 - Math.floor(maxBufferedBodyBytes / 4 / size));
    });
    const stats = http.stats();
    // One loopback client: a quarter of the budget, at least one whole body.
    expect(stats.bodyBytesPeak).toBeLessThanOrEqual(Math.max(maxBodyBytes, maxBufferedBodyBytes / 4));
    expect(stats.bodyBytesHeld).toBeLessThanOrEqual(maxBufferedBodyBytes / 4);
    for (const refused of attackers.filter((a) => a.received().startsWith("HTTP/1.1 503"))) {
      expect(refused.received()).toContain("too many request bodies are being received");
      await refused.ended;
    }
    // Once the attackers leave, their bytes are given back and a client is served.
    for (const attacker of attackers) attacker.socket.destroy();
    await vi.waitFor(() => expect(http.stats().bodyBytesHeld).toBe(0));
    const client = await connectHttpClient(http.url);
    expect(await client.toolNames()).toContain("tool_search");
    await client.client.close();
  });

  test("a body that does not arrive within bodyTimeoutMs is answered 408 and its connection closed", async () => {
    const clock = new ManualClock(0);
    const { http, port } = await serve({ clock, bodyTimeoutMs: 30_000 });
    const slow = await open(port, `${postHead(port, 1000)}{"jsonrpc":`);
    await vi.waitFor(() => expect(http.stats().bodyBytesHeld).toBe(11));
    await clock.advance(29_000);
    slow.socket.write('"2.0"');
    await clock.advance(1_000);
    await slow.ended;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.received()).toContain("the body did not arrive within 30000 ms");
    expect(http.stats().bodyBytesHeld).toBe(0);
  });
});

describe("connections", () => {
  test("sockets that send nothing are closed after headersTimeoutMs; a quiet SSE stream is a request in progress and stays", async () => {
    const { http, port } = await serve({ headersTimeoutMs: 300 });
    const initialized = await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() });
    const session = initialized.headers["mcp-session-id"] as string;
    // A GET stream on which nothing is sent.
    const stream = await open(
      port,
      `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${session}\r\n\r\n`,
    );
    await vi.waitFor(() => expect(stream.received()).toMatch(/^HTTP\/1\.1 200 /));
    const silent = await Promise.all(Array.from({ length: 50 }, () => open(port)));
    const started = Date.now();
    await Promise.all(silent.map((s) => s.ended));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(http.stats().connectionsSilenced).toBeGreaterThanOrEqual(50);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(stream.closed()).toBe(false);
  });

  test("headers that trickle in are cut after headersTimeoutMs", async () => {
    const { port } = await serve({ headersTimeoutMs: 500 });
    const slow = await open(port, "POST /mcp HTTP/1.1\r\n");
    const drip = setInterval(() => slow.socket.write("X-Drip: 1\r\n"), 100);
    const started = Date.now();
    await slow.ended;
    clearInterval(drip);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  test("connections over maxConnectionsPerClient, and over maxConnections, are answered 503 and closed", async () => {
    const { http, port } = await serve({ maxConnectionsPerClient: 5, headersTimeoutMs: 60_000 });
    const held = await Promise.all(Array.from({ length: 8 }, () => open(port)));
    await vi.waitFor(() => expect(held.filter((c) => c.closed())).toHaveLength(3));
    for (const refused of held.filter((c) => c.closed())) {
      expect(refused.received()).toContain("503 Service Unavailable");
      expect(refused.received()).toContain("this address has too many open connections");
    }
    expect(http.stats()).toMatchObject({ connections: 5, connectionsRefused: 3 });
    for (const connection of held) connection.socket.destroy();
    await vi.waitFor(() => expect(http.stats().connections).toBe(0));
    expect((await rawRequest(http.url, { method: "GET" })).status).toBe(400);
  });

  test("maxConnections bounds all clients together", async () => {
    const { http, port } = await serve({ maxConnections: 4, headersTimeoutMs: 60_000 });
    const held = await Promise.all(Array.from({ length: 6 }, () => open(port)));
    await vi.waitFor(() => expect(held.filter((c) => c.closed())).toHaveLength(2));
    expect(held.find((c) => c.closed())?.received()).toContain("the gateway has too many open connections");
    expect(http.stats().connectionsRefused).toBe(2);
  });
});

describe("limits are options", () => {
  test.each([
    [
      "maxBufferedBodyBytes below maxBodyBytes",
      { maxBodyBytes: 1024, maxBufferedBodyBytes: 512 },
      "at least maxBodyBytes",
    ],
    ["a zero session bound", { maxSessions: 0 }, "maxSessions"],
    ["a fractional per-client bound", { maxSessionsPerClient: 1.5 }, "maxSessionsPerClient"],
    ["a negative headers timeout", { headersTimeoutMs: -1 }, "headersTimeoutMs"],
  ])("%s is INVALID_CONFIG", async (_name, options, message) => {
    lab = await createLab();
    gateway = createGatewayServer({ governance: lab.governance });
    await expect(serveGatewayHttp(gateway, options)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining(message),
    });
  });
});
