import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { StderrTail } from "../../src/mcp/stderr-tail.js";
import { StdioChildTransport } from "../../src/mcp/stdio-child-transport.js";
import { childPidOf, createSdkTransport, inheritedEnvironment, stderrOf } from "../../src/mcp/transports.js";
import { serverConfig } from "./server-configs.js";

describe("createSdkTransport", () => {
  test.each([
    ["stdio", { command: "node" }, StdioChildTransport, true],
    ["http", { url: "http://127.0.0.1:1/mcp" }, StreamableHTTPClientTransport, false],
    ["sse", { url: "http://127.0.0.1:1/sse" }, SSEClientTransport, false],
  ] as const)("%s builds the SDK transport without starting it", (transport, fields, kind, hasStderr) => {
    const built = createSdkTransport(serverConfig({ id: "s", transport, ...fields }));
    expect(built).toBeInstanceOf(kind);
    expect(childPidOf(built)).toBeUndefined();
    expect(stderrOf(built) !== null).toBe(hasStderr);
  });

  test.each([
    ["stdio without command", { transport: "stdio" }, "mcpServers.s.command"],
    ["http without url", { transport: "http" }, "mcpServers.s.url"],
    ["sse with a malformed url", { transport: "sse", url: "not a url" }, '"not a url"'],
  ] as const)("%s is INVALID_CONFIG naming the field", (_name, fields: Partial<ServerConfig>, mention) => {
    expect(() => createSdkTransport(serverConfig({ id: "s", transport: "stdio", ...fields }))).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(mention) }),
    );
  });

  test("a stdio child gets the base env overlaid with the server's env, and its stderr is piped", async () => {
    const script =
      "process.stderr.write(JSON.stringify({ base: process.env.SCIENCEGATE_BASE, shared: process.env.SCIENCEGATE_SHARED, secret: process.env.SECRET_TOKEN ?? null }))";
    const transport = createSdkTransport(
      serverConfig({
        id: "s",
        transport: "stdio",
        command: process.execPath,
        args: ["-e", script],
        env: { SCIENCEGATE_SHARED: "server" },
      }),
      {
        env: {
          SCIENCEGATE_BASE: "base",
          SCIENCEGATE_SHARED: "base",
          SECRET_TOKEN: "s3cret",
          UNSET: undefined,
        },
      },
    );
    const tail = new StderrTail();
    const stderr = stderrOf(transport);
    if (!stderr) throw new Error("stderr is not piped");
    const ended = tail.follow(stderr);
    await transport.start();
    await ended;
    expect(JSON.parse(tail.lines()[0] ?? "{}")).toEqual({ base: "base", shared: "server", secret: null });
    await transport.close();
  });
});

describe("inheritedEnvironment", () => {
  test("passes the SDK defaults and Sciencegate variables but never the app's secrets", () => {
    const env = inheritedEnvironment({
      PATH: "/usr/bin",
      HOME: "/root",
      OPENAI_API_KEY: "sk-secret",
      AWS_SECRET_ACCESS_KEY: "x",
      SCIENCEGATE_PUBMED_BASE_URL: "http://127.0.0.1:1/pubmed",
      SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:8100",
      NCBI_API_KEY: "k",
      UNSET: undefined,
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/root",
      SCIENCEGATE_PUBMED_BASE_URL: "http://127.0.0.1:1/pubmed",
      SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:8100",
      NCBI_API_KEY: "k",
    });
  });
});

describe("StdioChildTransport.send", () => {
  test("a thousand writes into a full stdin wait on one drain listener (no MaxListenersExceededWarning) and all resolve once the child reads", async () => {
    // The child reads nothing for 300 ms, so its pipe fills and most writes have to wait for `drain`.
    const transport = new StdioChildTransport({
      command: process.execPath,
      args: ["-e", "setTimeout(() => process.stdin.on('data', () => {}), 300)"],
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      await transport.start();
      const padding = "x".repeat(4_096);
      const sends = Array.from({ length: 1_000 }, (_, id) => {
        const sent = transport.send({ jsonrpc: "2.0", id, method: "ping", params: { padding } });
        let settled = false;
        void sent.then(() => {
          settled = true;
        });
        return { sent, pending: () => !settled };
      });
      await new Promise((resolve) => setImmediate(resolve));
      const waited = sends.filter((s) => s.pending()).length;
      await Promise.all(sends.map((s) => s.sent));
      await new Promise((resolve) => setImmediate(resolve));
      expect(waited).toBeGreaterThan(100);
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
      await transport.close();
    }
  });
});
