/**
 * The gateway over HTTP at its default limits against hostile raw clients on a loopback port: 150
 * connections each sending an unfinished 4 MiB body, a body sent one byte every 5 s, 1,000 sockets that
 * send nothing, and rounds of short-lived clients that never send `DELETE`. Slow (real timeouts of 10
 * and 30 s), so in `npm run test:faults`; the same bounds at small limits are in
 * `test/gateway/gateway-http-limits.test.ts` and `gateway-http-sessions.test.ts`.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { createLab, type Lab } from "../gateway/gateway-harness.js";
import { connectHttpClient } from "../gateway/http-client.js";

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

async function serve() {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  http = await serveGatewayHttp(gateway, { onError: () => {} });
  return { http, port: Number(new URL(http.url).port) };
}

interface Raw {
  socket: Socket;
  received(): string;
  /** When the connection was established (the server's headers clock starts then). */
  openedAt: number;
  closedAt(): number | undefined;
  ended: Promise<void>;
}

function open(port: number): Promise<Raw> {
  return new Promise((resolve) => {
    let text = "";
    let closedAt: number | undefined;
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    const ended = new Promise<void>((done) =>
      socket.once("close", () => {
        closedAt = Date.now();
        done();
      }),
    );
    socket.once("connect", () =>
      resolve({ socket, received: () => text, openedAt: Date.now(), closedAt: () => closedAt, ended }),
    );
  });
}

function postHead(port: number, length: number): string {
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;
}

const MiB = 1024 * 1024;

describe("hostile HTTP clients at the default limits", () => {
  test("150 connections × unfinished 4 MiB bodies: at most a client's share of the 32 MiB budget is held, the rest refused 503; a client is served meanwhile", async () => {
    const { http, port } = await serve();
    const rssBefore = process.memoryUsage().rss;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const attackers = await Promise.all(Array.from({ length: 150 }, () => open(port)));
    for (const attacker of attackers) {
      attacker.socket.write(`${postHead(port, 4 * MiB)}{"jsonrpc":"2.0","id":1,"method":"ping","pad":"`);
      // All but the last 64 KiB: the body never ends.
      let sent = 0;
      const pump = () => {
        while (sent < 4 * MiB - 2 * chunk.length && !attacker.socket.destroyed) {
          sent += chunk.length;
          if (!attacker.socket.write(chunk)) return void attacker.socket.once("drain", pump);
        }
      };
      pump();
    }
    await vi.waitFor(
      () => {
        // Refused as soon as their bytes would pass the client's share of the budget.
        const refused = attackers.filter((a) => a.received().startsWith("HTTP/1.1 503"));
        expect(refused.length).toBeGreaterThanOrEqual(148);
      },
      { timeout: 30_000, interval: 200 },
    );
    const stats = http.stats();
    // One loopback client may hold a quarter of the 32 MiB budget: two 4 MiB bodies.
    expect(stats.bodyBytesPeak).toBeLessThanOrEqual(8 * MiB);
    const client = await connectHttpClient(http.url);
    expect(await client.toolNames()).toContain("tool_search");
    await client.client.close();
    const rssDuring = process.memoryUsage().rss;
    process.stderr.write(
      `150 × unfinished 4 MiB bodies: body bytes peak ${(stats.bodyBytesPeak / MiB).toFixed(1)} MiB, ` +
        `${attackers.filter((a) => a.received().startsWith("HTTP/1.1 503")).length} refused 503, RSS of the test process ${Math.round(rssBefore / MiB)} → ${Math.round(rssDuring / MiB)} MiB\n`,
    );
  });

  test("a body sent one byte every 5 s is cut with 408 within the 30 s body deadline", async () => {
    const { port } = await serve();
    const slow = await open(port);
    const started = Date.now();
    slow.socket.write(postHead(port, 100_000));
    const drip = setInterval(() => slow.socket.write("x"), 5_000);
    await slow.ended;
    clearInterval(drip);
    const heldMs = (slow.closedAt() ?? Date.now()) - started;
    process.stderr.write(`a 1 byte / 5 s body was held ${(heldMs / 1000).toFixed(1)} s\n`);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(heldMs).toBeGreaterThanOrEqual(29_000);
    expect(heldMs).toBeLessThan(35_000);
  }, 60_000);

  test("1,000 silent sockets: those over the per-address bound are refused at once, the rest closed after the 10 s headers timeout", async () => {
    const { http, port } = await serve();
    const started = Date.now();
    const silent = await Promise.all(Array.from({ length: 1_000 }, () => open(port)));
    await Promise.all(silent.map((s) => s.ended));
    const opening = Math.max(...silent.map((s) => s.openedAt)) - started;
    // Each socket is measured from its own connection: opening 1,000 sockets takes seconds on a loaded machine.
    const held = silent.map((s) => (s.closedAt() ?? Date.now()) - s.openedAt);
    const longest = Math.max(...held);
    process.stderr.write(
      `1,000 silent sockets (opened in ${(opening / 1000).toFixed(1)} s): ${http.stats().connectionsRefused} refused at once, ` +
        `the longest held ${(longest / 1000).toFixed(1)} s after connecting\n`,
    );
    expect(http.stats().connectionsRefused).toBeGreaterThanOrEqual(1_000 - 256);
    // The 10 s headers timeout, checked every second, plus scheduling slack; never the 60 s Node default.
    expect(longest).toBeLessThan(13_000);
    await vi.waitFor(() => expect(http.stats().connections).toBe(0));
  }, 60_000);

  test("5 rounds of 40 clients that initialize, call once and vanish without DELETE: a new client still connects", async () => {
    const { http } = await serve();
    for (let round = 1; round <= 5; round++) {
      const clients = await Promise.all(Array.from({ length: 40 }, () => connectHttpClient(http.url)));
      const answers = await Promise.all(
        clients.map((client) => client.call("mcp__lab__search", { query: `round ${round}` })),
      );
      expect(answers.every((answer) => answer.isError === undefined)).toBe(true);
      // Vanish: the SDK client's close() sends no DELETE; it only drops its streams.
      await Promise.all(clients.map((client) => client.client.close()));
    }
    expect(http.sessionCount()).toBeLessThanOrEqual(64);
    const late = await connectHttpClient(http.url);
    expect(await late.toolNames()).toContain("tool_search");
    await late.client.close();
    expect(http.stats().sessionsEvicted).toBeGreaterThanOrEqual(5 * 40 - 64);
  }, 120_000);
});
