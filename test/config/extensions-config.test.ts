// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config values with ${VAR} references, not templates.
import { describe, expect, test } from "vitest";
import { parseExtensionsConfig } from "../../src/config/extensions-config.js";
import type { ServerConfig } from "../../src/config/types.js";

/** Parses a config holding one server `s` and returns that server. */
function one(server: Record<string, unknown>, env: Record<string, string> = {}): ServerConfig {
  const config = parseExtensionsConfig({ mcpServers: { s: server } }, { env });
  expect(config.servers).toHaveLength(1);
  return config.servers[0]!;
}

describe("parseExtensionsConfig: transports", () => {
  test.each([
    [{ type: "stdio", command: "node" }, "stdio"],
    [{ transport: "stdio", command: "node" }, "stdio"],
    [{ type: "sse", url: "http://127.0.0.1:9000/sse" }, "sse"],
    [{ transport: "sse", url: "http://127.0.0.1:9000/sse" }, "sse"],
    [{ type: "http", url: "https://example.org/mcp" }, "http"],
    [{ type: "streamable_http", url: "https://example.org/mcp" }, "http"],
    [{ type: "streamable-http", url: "https://example.org/mcp" }, "http"],
    [{ transport: "streamable_http", url: "https://example.org/mcp" }, "http"],
    [{ transport: "Streamable-HTTP", url: "https://example.org/mcp" }, "http"],
    [{ type: "http", transport: "streamable_http", url: "https://example.org/mcp" }, "http"],
    [{ command: "uvx", args: ["pubmed-mcp"] }, "stdio"],
    [{ url: "https://example.org/mcp" }, "http"],
  ])("%j is %s", (server, transport) => {
    expect(one(server).transport).toBe(transport);
  });
});

describe("parseExtensionsConfig: normalized fields", () => {
  test("a full stdio entry keeps every field, with defaults for the absent ones", () => {
    const server = one({
      command: "node",
      args: ["dist/server.js", "--verbose"],
      cwd: "/opt/servers",
      env: { LOG_LEVEL: "debug" },
      description: "PubMed bridge",
      tool_call_timeout: 45,
    });
    expect(server).toEqual({
      id: "s",
      transport: "stdio",
      command: "node",
      args: ["dist/server.js", "--verbose"],
      cwd: "/opt/servers",
      env: { LOG_LEVEL: "debug" },
      headers: {},
      description: "PubMed bridge",
      enabled: true,
      toolCallTimeoutMs: 45_000,
      tools: {},
    });
  });

  test("servers keep the order of the file", () => {
    const config = parseExtensionsConfig(
      {
        mcpServers: {
          zeta: { command: "a" },
          alpha: { command: "b" },
          mid: { url: "http://127.0.0.1:1/mcp" },
        },
      },
      { env: {}, path: "/etc/extensions_config.json" },
    );
    expect(config.servers.map((s) => s.id)).toEqual(["zeta", "alpha", "mid"]);
    expect(config.path).toBe("/etc/extensions_config.json");
  });

  test.each([
    [{}, true],
    [{ enabled: true }, true],
    [{ enabled: false }, false],
    [{ enabled: null }, true],
    [{ enabled: "true" }, true],
    [{ enabled: 1 }, true],
    [{ enabled: "yes" }, true],
  ])("enabled %j -> %s (only a literal false disables)", (field, enabled) => {
    expect(one({ command: "node", ...field }).enabled).toBe(enabled);
  });

  test.each([
    [{ tool_call_timeout: 30 }, 30_000],
    [{ tool_call_timeout: 0.25 }, 250],
    [{ tool_call_timeout: 1.0004 }, 1000],
    [{ defaultToolTimeout: 12_000 }, 12_000],
    [{ tool_call_timeout: 5, defaultToolTimeout: 12_000 }, 5000],
    [{}, undefined],
  ])("timeout %j -> %s ms", (field, ms) => {
    expect(one({ command: "node", ...field }).toolCallTimeoutMs).toBe(ms);
  });

  test.each([
    [{ priority: 150 }, 100],
    [{ priority: -20 }, 0],
    [{ priority: 0 }, 0],
    [{ priority: 100 }, 100],
    [{ priority: 42.5 }, 42.5],
    [{}, 50],
  ])("routing priority %j -> %s", (routing, priority) => {
    expect(one({ command: "node", routing }).routing?.priority).toBe(priority);
  });

  test("routing defaults to mode off and no keywords; absent routing stays absent", () => {
    expect(one({ command: "node", routing: { priority: 70 } }).routing).toEqual({
      keywords: [],
      mode: "off",
      priority: 70,
    });
    expect(one({ command: "node" })).not.toHaveProperty("routing");
  });

  test("per-tool routing is normalized and keyed by MCP tool name", () => {
    const server = one(
      {
        command: "node",
        routing: { keywords: ["pubmed"], mode: "prefer", priority: 60 },
        tools: {
          search_articles: { routing: { keywords: ["paper", "$TOPIC"], mode: "prefer", priority: 500 } },
          get_article: {},
        },
      },
      { TOPIC: "protein" },
    );
    expect(server.routing).toEqual({ keywords: ["pubmed"], mode: "prefer", priority: 60 });
    expect(server.tools).toEqual({
      search_articles: { routing: { keywords: ["paper", "protein"], mode: "prefer", priority: 100 } },
      get_article: {},
    });
  });

  test("unknown fields are ignored for forward compatibility", () => {
    const config = parseExtensionsConfig(
      {
        skills: { enabled: true },
        version: 3,
        mcpServers: { s: { command: "node", futureField: { x: 1 } } },
      },
      { env: {} },
    );
    expect(config.servers[0]?.command).toBe("node");
  });

  test("a file without mcpServers (or with null) has no servers", () => {
    expect(parseExtensionsConfig({}, { env: {} }).servers).toEqual([]);
    expect(parseExtensionsConfig({ mcpServers: null }, { env: {} }).servers).toEqual([]);
  });
});

describe("parseExtensionsConfig: env substitution in every string value", () => {
  const env = {
    SCIENCE_AGENT_LLM_WIKI_URL: "http://10.0.0.5:8100",
    SCIENCE_AGENT_LLM_WIKI_TOKEN: "wiki-secret",
    NODE_BIN: "/usr/bin/node",
    HOME_DIR: "/home/ada",
    API_KEY: "k-123",
  };

  test("the LLM Wiki mapping passes the URL to the bridge", () => {
    const server = one(
      {
        command: "node",
        args: ["servers/llm-wiki.js", "--origin=$SCIENCE_AGENT_LLM_WIKI_URL"],
        env: { SCIENCE_AGENT_LLM_WIKI_URL: "$SCIENCE_AGENT_LLM_WIKI_URL" },
      },
      env,
    );
    expect(server.env).toEqual({ SCIENCE_AGENT_LLM_WIKI_URL: "http://10.0.0.5:8100" });
    expect(server.args[1]).toBe("--origin=http://10.0.0.5:8100");
  });

  test("$SCIENCE_AGENT_LLM_WIKI_URL in a url", () => {
    expect(one({ type: "http", url: "$SCIENCE_AGENT_LLM_WIKI_URL/mcp" }, env).url).toBe(
      "http://10.0.0.5:8100/mcp",
    );
  });

  test("command, cwd, headers, description and keywords are substituted too", () => {
    const server = one(
      {
        command: "${NODE_BIN}",
        cwd: "$HOME_DIR/servers",
        description: "Key ${API_KEY:-none}, cost $$0",
        routing: { keywords: ["${MISSING_KEYWORD:-wiki}"] },
      },
      env,
    );
    expect(server).toMatchObject({
      command: "/usr/bin/node",
      cwd: "/home/ada/servers",
      description: "Key k-123, cost $0",
      routing: { keywords: ["wiki"] },
    });
    const http = one({ url: "https://example.org/mcp", headers: { "X-Api-Key": "$API_KEY" } }, env);
    expect(http.headers).toEqual({ "X-Api-Key": "k-123" });
  });

  test("${VAR:-default} supplies the default origin when the variable is unset", () => {
    expect(one({ url: "${SCIENCE_AGENT_LLM_WIKI_URL:-http://127.0.0.1:8100}" }, {}).url).toBe(
      "http://127.0.0.1:8100",
    );
  });

  test("a disabled server's unset variables are not an error and stay as written", () => {
    const server = one({ enabled: false, url: "$SCIENCE_AGENT_LLM_WIKI_URL", env: { T: "$NOT_SET" } }, {});
    expect(server.enabled).toBe(false);
    expect(server.url).toBe("$SCIENCE_AGENT_LLM_WIKI_URL");
    expect(server.env).toEqual({ T: "$NOT_SET" });
  });

  test("bearer_token_env sends Authorization: Bearer <value>", () => {
    const server = one(
      { type: "sse", url: "https://wiki.example/sse", bearer_token_env: "SCIENCE_AGENT_LLM_WIKI_TOKEN" },
      env,
    );
    expect(server.headers).toEqual({ Authorization: "Bearer wiki-secret" });
  });

  test("bearer_token_env of a disabled server may be unset", () => {
    const server = one({ enabled: false, url: "https://wiki.example/mcp", bearer_token_env: "NOT_SET" }, {});
    expect(server.headers).toEqual({});
  });
});

describe("parseExtensionsConfig: MultiServerMCPClient config shape", () => {
  // The shape of the @langchain/mcp-adapters README example, written as a JSON-compatible object.
  const langGraphConfig = {
    throwOnLoadError: true,
    prefixToolNameWithServerName: false,
    additionalToolNamePrefix: "",
    useStandardContentBlocks: true,
    outputHandling: { resource: "artifact", text: "content" },
    defaultToolTimeout: 20_000,
    mcpServers: {
      math: {
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-math"],
        restart: { enabled: true, maxAttempts: 3, delayMs: 1000 },
        stderr: "pipe",
      },
      filesystem: {
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem"],
      },
      weather: {
        url: "https://example.com/weather/mcp",
        headers: { Authorization: "Bearer token123" },
        automaticSSEFallback: false,
        outputHandling: "content",
      },
      github: {
        transport: "sse",
        url: "https://example.com/mcp",
        reconnect: { enabled: true, maxAttempts: 5, delayMs: 2000 },
        defaultToolTimeout: 15_000,
      },
    },
  };

  test("is read into the same servers an extensions_config.json would give", () => {
    const config = parseExtensionsConfig(langGraphConfig, { env: {} });
    expect(config.servers.map(({ id, transport, enabled }) => ({ id, transport, enabled }))).toEqual([
      { id: "math", transport: "stdio", enabled: true },
      { id: "filesystem", transport: "stdio", enabled: true },
      { id: "weather", transport: "http", enabled: true },
      { id: "github", transport: "sse", enabled: true },
    ]);
    const byId = new Map(config.servers.map((s) => [s.id, s]));
    expect(byId.get("math")).toMatchObject({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-math"],
    });
    expect(byId.get("weather")?.headers).toEqual({ Authorization: "Bearer token123" });
    expect(byId.get("github")?.toolCallTimeoutMs).toBe(15_000);
    expect(byId.get("math")).not.toHaveProperty("toolCallTimeoutMs");
  });
});
