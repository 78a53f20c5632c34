import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { StderrTail } from "../../src/mcp/stderr-tail.js";
import { childPidOf, createSdkTransport, stderrOf } from "../../src/mcp/transports.js";
import { serverConfig } from "./server-configs.js";

describe("createSdkTransport", () => {
  test.each([
    ["stdio", { command: "node" }, StdioClientTransport, true],
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
      "process.stderr.write(JSON.stringify({ base: process.env.BASE, shared: process.env.SHARED }))";
    const transport = createSdkTransport(
      serverConfig({
        id: "s",
        transport: "stdio",
        command: process.execPath,
        args: ["-e", script],
        env: { SHARED: "server" },
      }),
      { env: { BASE: "base", SHARED: "base", UNSET: undefined } },
    );
    const tail = new StderrTail();
    const stderr = stderrOf(transport);
    if (!stderr) throw new Error("stderr is not piped");
    const ended = tail.follow(stderr);
    await transport.start();
    await ended;
    expect(JSON.parse(tail.lines()[0] ?? "{}")).toEqual({ base: "base", shared: "server" });
    await transport.close();
  });
});
