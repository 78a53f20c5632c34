import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import type { ServerConfig } from "../../src/config/types.js";
import { ServerPool, type ServerPoolOptions } from "../../src/mcp/server-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { serverConfig } from "./server-configs.js";

const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error) => error,
  );

/** Each (re)start gets a fresh McpServer linked in memory; `kill()` makes the current one go away. */
function inMemoryServers() {
  const transports: InMemoryTransport[] = [];
  let created = 0;
  const createTransport = async (): Promise<InMemoryTransport> => {
    created++;
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new McpServer({ name: "memory", version: "1.0.0" });
    mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text }],
    }));
    mcp.registerTool("explode", { inputSchema: {} }, async () => {
      throw new Error("handler exploded");
    });
    mcp.registerTool("hang", { inputSchema: {} }, () => new Promise<never>(() => {}));
    await mcp.connect(server);
    transports.push(server);
    return client;
  };
  return {
    createTransport,
    created: () => created,
    kill: async () => transports.at(-1)?.close(),
  };
}

const memory = (overrides: Partial<ServerConfig> = {}) =>
  serverConfig({ id: "mem", transport: "http", url: "http://127.0.0.1:9/unused", ...overrides });

function memoryPool(options: ServerPoolOptions = {}, config: Partial<ServerConfig> = {}) {
  const servers = inMemoryServers();
  const clock = new ManualClock(0);
  const pool = new ServerPool([memory(config)], {
    clock,
    createTransport: servers.createTransport,
    ...options,
  });
  return { pool, servers, clock };
}

describe("ServerPool over an injected in-memory transport", () => {
  test("lists tools and returns the SDK's results, isError results included", async () => {
    const { pool } = memoryPool();
    expect((await pool.listTools("mem")).map((tool) => tool.name)).toEqual(["echo", "explode", "hang"]);
    expect(await pool.callTool("mem", "echo", { text: "hi" })).toMatchObject({
      content: [{ type: "text", text: "hi" }],
    });
    const cases = [
      ["explode", {}, "handler exploded"],
      ["echo", { text: 42 }, "text"],
      ["no_such_tool", {}, "no_such_tool"],
    ] as const;
    for (const [name, args, mention] of cases) {
      const result = await pool.callTool("mem", name, args);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(mention);
    }
    await pool.close();
  });

  test("getClient returns the connected SDK client", async () => {
    const { pool } = memoryPool();
    const client = await pool.getClient("mem");
    expect(client.getServerVersion()?.name).toBe("memory");
    await pool.close();
  });

  test("the server's toolCallTimeoutMs is the default timeout of a call", async () => {
    const { pool } = memoryPool({}, { toolCallTimeoutMs: 20 });
    const error = await rejection(pool.callTool("mem", "hang", {}));
    expect(error).toBeInstanceOf(SdkError);
    expect((error as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
    await pool.close();
  });

  test("a server that never answers initialize fails after connectTimeoutMs on the clock", async () => {
    const clock = new ManualClock(0);
    const pool = new ServerPool([memory()], {
      clock,
      connectTimeoutMs: 5_000,
      createTransport: () => InMemoryTransport.createLinkedPair()[0],
    });
    const pending = rejection(pool.listTools("mem"));
    await clock.advance(4_999);
    expect(pool.state("mem").status).toBe("connecting");
    await clock.advance(1);
    expect(await pending).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
    expect(((await pending) as Error).message).toContain("did not finish connecting within 5000 ms");
    expect(pool.state("mem").status).toBe("failed");
    await pool.close();
  });

  test("a transport that cannot be created fails the call as UPSTREAM_UNAVAILABLE", async () => {
    const pool = new ServerPool([memory()], {
      createTransport: () => {
        throw new Error("no route to host");
      },
    });
    const error = await rejection(pool.listTools("mem"));
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
    expect((error as Error).message).toMatch(/'mem' could not be started.*no route to host/);
    await pool.close();
  });
});

describe("ServerPool restart backoff", () => {
  test("the Nth quick restart waits longer, up to maxMs", async () => {
    const { pool, servers, clock } = memoryPool({
      restartBackoff: { initialMs: 100, factor: 3, maxMs: 1_000 },
    });
    await pool.listTools("mem");
    for (const wait of [100, 300, 900, 1_000, 1_000]) {
      await servers.kill();
      expect(pool.state("mem").status).toBe("failed");
      const startsBefore = pool.state("mem").starts;
      const next = pool.listTools("mem");
      await clock.advance(wait - 1);
      expect(pool.state("mem").starts).toBe(startsBefore);
      await clock.advance(1);
      await next;
      expect(pool.state("mem")).toMatchObject({ status: "connected", starts: startsBefore + 1 });
    }
    await pool.close();
  });

  test("a connection that lived past resetAfterMs starts the backoff afresh", async () => {
    const { pool, servers, clock } = memoryPool({ restartBackoff: { initialMs: 100, resetAfterMs: 5_000 } });
    await pool.listTools("mem");
    await servers.kill();
    const second = pool.listTools("mem");
    await clock.advance(100);
    await second;
    await clock.advance(5_000);
    await servers.kill();
    const third = pool.listTools("mem");
    await clock.advance(99);
    expect(pool.state("mem").starts).toBe(2);
    await clock.advance(1);
    await third;
    expect(pool.state("mem").starts).toBe(3);
    await pool.close();
  });

  test("a use that comes after the backoff has passed restarts at once", async () => {
    const { pool, servers, clock } = memoryPool();
    await pool.listTools("mem");
    await servers.kill();
    await clock.advance(250);
    await pool.listTools("mem");
    expect(pool.state("mem")).toMatchObject({ status: "connected", starts: 2 });
    await pool.close();
  });

  test("an aborted caller stops waiting; the shared restart still serves the others", async () => {
    const { pool, servers, clock } = memoryPool();
    await pool.listTools("mem");
    await servers.kill();
    const controller = new AbortController();
    const aborted = rejection(pool.callTool("mem", "echo", { text: "a" }, { signal: controller.signal }));
    const patient = pool.callTool("mem", "echo", { text: "b" });
    controller.abort(new Error("caller gave up"));
    expect(await aborted).toMatchObject({ message: "caller gave up" });
    await clock.advance(250);
    expect(await patient).toMatchObject({ content: [{ text: "b" }] });
    expect(pool.state("mem").starts).toBe(2);
    await pool.close();
  });

  test("close() during a backoff wait rejects the waiter and starts nothing", async () => {
    const { pool, servers, clock } = memoryPool();
    await pool.listTools("mem");
    await servers.kill();
    const waiting = rejection(pool.listTools("mem"));
    await pool.close();
    expect(await waiting).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining("pool is closed"),
    });
    await clock.advance(10_000);
    expect(pool.state("mem")).toMatchObject({ status: "closed", starts: 1 });
    expect(servers.created()).toBe(1);
  });
});

describe("ServerPool ids and configuration", () => {
  const pool = new ServerPool([
    serverConfig({ id: "on", transport: "stdio" }),
    serverConfig({ id: "off", transport: "stdio", command: "never-run", enabled: false }),
  ]);

  test("serverIds lists every configured server in order", () => {
    expect(pool.serverIds()).toEqual(["on", "off"]);
  });

  test("a disabled server is reported as disabled and never spawned", async () => {
    expect(pool.state("off")).toMatchObject({ status: "disabled", starts: 0 });
    for (const call of [pool.listTools("off"), pool.callTool("off", "x", {}), pool.getClient("off")]) {
      expect(await rejection(call)).toMatchObject({ name: "GovernanceError", code: "SOURCE_DISABLED" });
    }
    expect(pool.state("off").starts).toBe(0);
  });

  test.each<[string, () => unknown]>([
    ["state", () => pool.state("nope")],
    ["listTools", () => pool.listTools("nope")],
    ["callTool", () => pool.callTool("nope", "x", {})],
    ["getClient", () => pool.getClient("nope")],
  ])("%s of an unknown id throws UNKNOWN_ID naming the configured ids", async (_name, use) => {
    const error = await rejection((async () => use())());
    expect(error).toMatchObject({
      code: "UNKNOWN_ID",
      message: expect.stringContaining("configured: on, off"),
    });
  });

  test("a stdio server without a command fails with INVALID_CONFIG", async () => {
    const error = await rejection(pool.listTools("on"));
    expect(error).toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("mcpServers.on.command"),
    });
    expect(pool.state("on").status).toBe("failed");
  });

  test("two servers with one id are rejected with DUPLICATE_ID", () => {
    const twice = [memory(), memory()];
    expect(() => new ServerPool(twice)).toThrow(expect.objectContaining({ code: "DUPLICATE_ID" }));
  });

  test("a throwing onToolsChanged listener does not keep the others from being told", async () => {
    const { pool: memPool, servers, clock } = memoryPool();
    const told: string[] = [];
    memPool.onToolsChanged(() => {
      throw new Error("listener bug");
    });
    const stop = memPool.onToolsChanged((id) => told.push(id));
    await memPool.listTools("mem");
    await servers.kill();
    const restarted = memPool.listTools("mem");
    await clock.advance(250);
    await restarted;
    expect(told).toEqual(["mem"]);
    stop();
    await servers.kill();
    const again = memPool.listTools("mem");
    await clock.advance(500);
    await again;
    expect(told).toEqual(["mem"]);
    await memPool.close();
  });
});
