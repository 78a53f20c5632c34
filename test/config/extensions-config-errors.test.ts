// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config values with ${VAR} references, not templates.
import { describe, expect, test } from "vitest";
import { parseExtensionsConfig, validateExtensionsConfig } from "../../src/config/extensions-config.js";
import { isGovernanceError } from "../../src/core/errors.js";

const FILE = "extensions_config.json";

/** The single issue of a config holding one server `s`. */
function issueOf(server: unknown, env: Record<string, string> = {}) {
  const result = validateExtensionsConfig({ mcpServers: { s: server } }, { env, path: FILE });
  if (result.ok) throw new Error("expected the config to be rejected");
  expect(result.issues).toHaveLength(1);
  return result.issues[0]!;
}

describe("validateExtensionsConfig: one issue per mistake, with field path and fix", () => {
  test.each([
    [
      "missing command",
      { type: "stdio" },
      "mcpServers.s.command",
      /required for a stdio server.*"command": "node"/,
    ],
    ["empty command", { command: "", type: "stdio" }, "mcpServers.s.command", /required for a stdio server/],
    [
      "missing url (http)",
      { type: "http" },
      "mcpServers.s.url",
      /required for an http server.*https:\/\/example.org\/mcp/,
    ],
    ["missing url (sse)", { transport: "sse" }, "mcpServers.s.url", /required for an sse server/],
    [
      "bad url scheme",
      { url: "ftp://example.org/mcp" },
      "mcpServers.s.url",
      /must be an http:\/\/ or https:\/\/ URL, not the string "ftp:\/\/example.org\/mcp"/,
    ],
    [
      "unparsable url",
      { type: "sse", url: "localhost:8100" },
      "mcpServers.s.url",
      /must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "unknown transport",
      { type: "websocket", url: "wss://x" },
      "mcpServers.s.type",
      /unknown transport "websocket". Use one of "stdio", "sse", "http", "streamable_http", "streamable-http"/,
    ],
    [
      "unknown transport via transport",
      { transport: "grpc", command: "x" },
      "mcpServers.s.transport",
      /unknown transport "grpc"/,
    ],
    [
      "a transport named after an Object.prototype member",
      { type: "constructor", command: "x" },
      "mcpServers.s.type",
      /unknown transport "constructor"/,
    ],
    [
      "type and transport disagree",
      { type: "stdio", transport: "sse", command: "x" },
      "mcpServers.s",
      /type "stdio" but transport "sse". Keep only one/,
    ],
    ["neither command nor url", { description: "lost" }, "mcpServers.s", /needs either "command".*or "url"/],
    [
      "both command and url",
      { command: "node", url: "http://127.0.0.1:1" },
      "mcpServers.s",
      /ambiguous. Add "type": "stdio" or "type": "http"/,
    ],
    [
      'string "false"',
      { command: "x", enabled: "false" },
      "mcpServers.s.enabled",
      /the string "false".*Write false without quotes/,
    ],
    [
      'string "False"',
      { command: "x", enabled: " False " },
      "mcpServers.s.enabled",
      /only the boolean false disables/,
    ],
    [
      "number 0 for enabled",
      { command: "x", enabled: 0 },
      "mcpServers.s.enabled",
      /the number 0.*Write false/,
    ],
    [
      "args not an array",
      { command: "x", args: "-y pkg" },
      "mcpServers.s.args",
      /must be an array, not the string "-y pkg". Write args as an array of strings/,
    ],
    [
      "number in args",
      { command: "x", args: ["--port", 8100] },
      "mcpServers.s.args[1]",
      /must be a string, not the number 8100. Put the value in double quotes/,
    ],
    ["env not a map", { command: "x", env: ["A=1"] }, "mcpServers.s.env", /must be an object, not an array/],
    [
      "number in env",
      { command: "x", env: { PORT: 8100 } },
      "mcpServers.s.env.PORT",
      /must be a string, not the number 8100/,
    ],
    [
      "boolean in headers",
      { url: "http://127.0.0.1:1", headers: { "X-Debug": true } },
      "mcpServers.s.headers.X-Debug",
      /must be a string, not the boolean true/,
    ],
    [
      "timeout as string",
      { command: "x", tool_call_timeout: "30" },
      "mcpServers.s.tool_call_timeout",
      /must be a number, not the string "30". Write the number of seconds/,
    ],
    [
      "timeout zero",
      { command: "x", tool_call_timeout: 0 },
      "mcpServers.s.tool_call_timeout",
      /must be greater than 0/,
    ],
    [
      "routing mode",
      { command: "x", routing: { mode: "always" } },
      "mcpServers.s.routing.mode",
      /must be one of "prefer", "off", not the string "always"/,
    ],
    [
      "priority as string",
      { command: "x", routing: { priority: "high" } },
      "mcpServers.s.routing.priority",
      /must be a number.*from 0 to 100/,
    ],
    [
      "keywords not array",
      { command: "x", tools: { search: { routing: { keywords: "pubmed" } } } },
      "mcpServers.s.tools.search.routing.keywords",
      /must be an array.*keywords as an array/,
    ],
    [
      "description as number",
      { command: "x", description: 5 },
      "mcpServers.s.description",
      /must be a string/,
    ],
    [
      "restart of wrong type",
      { command: "x", restart: true },
      "mcpServers.s.restart",
      /must be an object, not the boolean true/,
    ],
    [
      "outputHandling unknown",
      { command: "x", outputHandling: "model" },
      "mcpServers.s.outputHandling",
      /"content", "artifact"/,
    ],
    [
      "stderr unknown",
      { command: "x", stderr: "file" },
      "mcpServers.s.stderr",
      /one of "overlapped", "pipe", "ignore", "inherit"/,
    ],
    [
      "server not an object",
      "node server.js",
      "mcpServers.s",
      /must be an object with the server's settings, not the string "node server.js"/,
    ],
    [
      "bad bearer_token_env name",
      { url: "https://x.org/mcp", bearer_token_env: "my-token" },
      "mcpServers.s.bearer_token_env",
      /name of an environment variable/,
    ],
    [
      "bearer_token_env on stdio",
      { command: "x", bearer_token_env: "TOKEN" },
      "mcpServers.s.bearer_token_env",
      /only applies to sse and http servers.*"env"/,
    ],
    [
      "bearer_token_env and an Authorization header",
      { url: "https://x.org/mcp", headers: { authorization: "Bearer a" }, bearer_token_env: "TOKEN" },
      "mcpServers.s.bearer_token_env",
      /conflicts with the Authorization header/,
    ],
    [
      "bearer_token_env unset",
      { url: "https://x.org/mcp", bearer_token_env: "WIKI_TOKEN_UNSET" },
      "mcpServers.s.bearer_token_env",
      /WIKI_TOKEN_UNSET, which is not set/,
    ],
    ["malformed ${", { command: "x", args: ["${HOST"] }, "mcpServers.s.args[0]", /unterminated "\$\{HOST"/],
  ])("%s", (_name, server, path, message) => {
    const issue = issueOf(server, { TOKEN: "t" });
    expect(issue.path).toBe(path);
    expect(issue.message).toMatch(message);
  });

  test.each([
    ["url", { url: "$SCIENCE_AGENT_LLM_WIKI_URL" }, "url"],
    ["args", { command: "node", args: ["--key", "${API_KEY}"] }, "args[1]"],
    ["env", { command: "node", env: { KEY: "$API_KEY" } }, "env.KEY"],
    ["headers", { url: "https://x.org/mcp", headers: { "X-Key": "$API_KEY" } }, "headers.X-Key"],
    ["command", { command: "$NODE_HOME/bin/node" }, "command"],
    ["cwd", { command: "node", cwd: "$WORKDIR" }, "cwd"],
  ])(
    "an unset variable in %s of an enabled server names server, field and variable",
    (_field, server, field) => {
      const issue = issueOf(server);
      expect(issue.path).toBe(`mcpServers.s.${field}`);
      expect(issue.message).toMatch(
        /^needs environment variable [A-Z_]+, which is not set\. Set it, or write \$\{/,
      );
    },
  );

  test("the LLM Wiki URL error reads exactly as documented", () => {
    const run = () =>
      parseExtensionsConfig(
        { mcpServers: { "llm-wiki": { url: "$SCIENCE_AGENT_LLM_WIKI_URL" } } },
        { env: {}, path: FILE },
      );
    expect(run).toThrow(
      "extensions_config.json: mcpServers.llm-wiki.url needs environment variable SCIENCE_AGENT_LLM_WIKI_URL, which is not set. Set it, or write ${SCIENCE_AGENT_LLM_WIKI_URL:-http://127.0.0.1:8100} for a default.",
    );
  });

  test.each([
    ["my server", 'mcpServers["my server"]', /Rename it, e.g. "my-server"/],
    ["wiki.v2", 'mcpServers["wiki.v2"]', /Rename it, e.g. "wiki-v2"/],
    ["-lead", "mcpServers.-lead", /Rename it, e.g. "lead"/],
    ["x".repeat(65), `mcpServers.${"x".repeat(65)}`, /over 64 characters/],
  ])("server id %j is rejected", (id, path, message) => {
    const result = validateExtensionsConfig({ mcpServers: { [id]: { command: "node" } } }, { env: {} });
    expect(result).toEqual({ ok: false, issues: [{ path, message: expect.stringMatching(message) }] });
  });

  test.each(["toString", "valueOf", "__proto__", "constructor", "hasOwnProperty"])(
    "server id %j (a member of Object.prototype) is rejected, alone and beside a good server",
    (id) => {
      const alone = JSON.parse(`{"mcpServers": {${JSON.stringify(id)}: {"command": "node"}}}`);
      const beside = JSON.parse(
        `{"mcpServers": {"good": {"command": "node"}, ${JSON.stringify(id)}: {"command": "node"}}}`,
      );
      for (const json of [alone, beside]) {
        const result = validateExtensionsConfig(json, { env: {} });
        expect(result).toEqual({
          ok: false,
          issues: [
            {
              path: `mcpServers.${id}`,
              message: expect.stringMatching(
                /is a reserved name \(a member of Object.prototype.*Rename the server, e.g. "[A-Za-z]+-server"/,
              ),
            },
          ],
        });
      }
    },
  );

  test("every reserved server id is listed in one INVALID_CONFIG naming the file", () => {
    const json = JSON.parse(
      '{"mcpServers": {"toString": {"command": "node"}, "valueOf": {"command": "node"}, "__proto__": {"command": "node"}, "constructor": {"command": "node"}, "ok-server": {"command": "node"}}}',
    );
    const run = () => parseExtensionsConfig(json, { env: {}, path: FILE });
    expect(run).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
    expect(run).toThrow(
      /^extensions_config.json has 4 problems:\n {2}- mcpServers.toString is a reserved name.*\n {2}- mcpServers.valueOf .*\n {2}- mcpServers.__proto__ .*"proto-server".*\n {2}- mcpServers.constructor /,
    );
  });

  test.each([
    [[{ command: "node" }], /the top level must be a JSON object.*not an array/],
    ["text", /not the string "text"/],
    [null, /not null/],
  ])("a top level of %j is rejected", (json, message) => {
    const result = validateExtensionsConfig(json, { env: {} });
    expect(result).toEqual({ ok: false, issues: [{ path: "", message: expect.stringMatching(message) }] });
  });

  test.each([
    [
      { mcpServers: [] },
      "mcpServers",
      /must be an object, not an array. Write it as an object mapping server ids/,
    ],
    [{ mcpServers: {}, throwOnLoadError: "yes" }, "throwOnLoadError", /must be true or false/],
    [{ mcpServers: {}, additionalToolNamePrefix: 1 }, "additionalToolNamePrefix", /must be a string/],
    [{ mcpServers: {}, defaultToolTimeout: -5 }, "defaultToolTimeout", /must be greater than 0/],
  ])("top-level field %j is type-checked", (json, path, message) => {
    const result = validateExtensionsConfig(json, { env: {} });
    expect(result).toEqual({ ok: false, issues: [{ path, message: expect.stringMatching(message) }] });
  });
});

describe("parseExtensionsConfig: all issues of a file in one INVALID_CONFIG error", () => {
  test("collects issues of every server and names the file", () => {
    const json = {
      mcpServers: {
        pubmed: { command: "uvx", args: ["pubmed-mcp", 1] },
        "llm-wiki": { url: "$SCIENCE_AGENT_LLM_WIKI_URL" },
        off: { enabled: false, url: "$ALSO_UNSET" },
        broken: { type: "ws", url: "ws://x" },
      },
    };
    let caught: unknown;
    try {
      parseExtensionsConfig(json, { env: {}, path: "/etc/sciencegate/extensions_config.json" });
    } catch (error) {
      caught = error;
    }
    expect(isGovernanceError(caught)).toBe(true);
    if (!isGovernanceError(caught)) return;
    expect(caught.code).toBe("INVALID_CONFIG");
    expect(caught.message.split("\n")).toEqual([
      "/etc/sciencegate/extensions_config.json has 3 problems:",
      "  - mcpServers.pubmed.args[1] must be a string, not the number 1. Put the value in double quotes.",
      expect.stringContaining(
        "  - mcpServers.llm-wiki.url needs environment variable SCIENCE_AGENT_LLM_WIKI_URL",
      ),
      expect.stringContaining('  - mcpServers.broken.type names an unknown transport "ws"'),
    ]);
    expect(caught.data).toMatchObject({
      file: "/etc/sciencegate/extensions_config.json",
      path: "mcpServers.pubmed.args[1]",
      reason: "must be a string, not the number 1. Put the value in double quotes.",
    });
    expect(caught.data?.issues).toHaveLength(3);
  });

  test("a config given in code is named as such", () => {
    expect(() => parseExtensionsConfig({ mcpServers: { s: {} } }, { env: {} })).toThrow(
      /^extensions config \(given in code\): mcpServers.s needs either/,
    );
  });

  test("reads process.env when no env is given", () => {
    const name = "SCIENCEGATE_TEST_CONFIG_URL";
    process.env[name] = "http://127.0.0.1:8123";
    try {
      expect(parseExtensionsConfig({ mcpServers: { s: { url: `$${name}` } } }).servers[0]?.url).toBe(
        "http://127.0.0.1:8123",
      );
    } finally {
      delete process.env[name];
    }
  });
});
