import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  assertProviderTokens,
  callTimeoutMs,
  loadScienceToml,
  parseScienceToml,
  providerToken,
} from "../../src/adk/science-toml.js";
import { splitCommand } from "../../src/adk/split-command.js";

describe("splitCommand", () => {
  test.each([
    ["uvx mcp-pubchem", ["uvx", "mcp-pubchem"]],
    ["  node   server.js  ", ["node", "server.js"]],
    [`python -m "my server" --name='a b'`, ["python", "-m", "my server", "--name=a b"]],
    [String.raw`run a\ b "q\"x" '$HOME'`, ["run", "a b", 'q"x', "$HOME"]],
    [`cmd "" x`, ["cmd", "", "x"]],
  ])("%s", (line, words) => {
    expect(splitCommand(line)).toEqual(words);
  });

  test.each([`cmd "open`, "cmd 'open", "cmd \\"])("%s is a config error", (line) => {
    expect(() => splitCommand(line)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});

/** "The complete config" of the Science ADK's "Tools and MCP" page, verbatim (comments included). */
const ADK_COMPLETE_CONFIG = `[project]
name = "molecular-dynamics"

# Local Python functions in tools/*.py
[tools.local]
path = "./tools"

# Stdio-based MCP server
[tools.pubchem]
command = "uvx mcp-pubchem"

# Remote HTTP MCP server
[tools.remote_compute]
url = "https://mcp.example.org/api"
token_env = "COMPUTE_API_TOKEN"

[run]
node_timeout_s = 900
max_optimize_iterations = 5
`;

describe("parseScienceToml", () => {
  test("the ADK's complete config loads, every key of it, from a file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sciencegate-toml-"));
    await writeFile(join(dir, "science.toml"), ADK_COMPLETE_CONFIG);
    const project = await loadScienceToml("science.toml", dir);
    expect(project).toEqual({
      path: join(dir, "science.toml"),
      name: "molecular-dynamics",
      providers: [
        { id: "local", kind: "local", path: join(dir, "tools") },
        { id: "pubchem", kind: "stdio", command: "uvx", args: ["mcp-pubchem"] },
        {
          id: "remote_compute",
          kind: "remote",
          url: "https://mcp.example.org/api",
          tokenEnv: "COMPUTE_API_TOKEN",
        },
      ],
      run: { nodeTimeoutS: 900, maxOptimizeIterations: 5 },
    });
    expect(callTimeoutMs(project)).toBe(900_000);
  });

  test.each([
    ["not toml", "[tools", /not valid TOML/],
    ["two kinds", `[tools.x]\npath = "a"\ncommand = "b"`, /exactly one of path/],
    ["token without url", `[tools.x]\ncommand = "b"\ntoken_env = "T"`, /token_env only applies/],
    ["unknown key", `[tools.x]\ncommand = "b"\ntoken = "secret"`, /tools\.x/],
    ["bad run", `[run]\nnode_timeout_s = -1`, /run\.node_timeout_s/],
    ["fractional iterations", `[run]\nmax_optimize_iterations = 2.5`, /run\.max_optimize_iterations/],
    ["no iterations", `[run]\nmax_optimize_iterations = 0`, /run\.max_optimize_iterations/],
    [
      "unknown run setting",
      `[run]\nnode_timeout = 5`,
      /run: Unrecognized key: "node_timeout" \(known: node_timeout_s, max_optimize_iterations\)/,
    ],
    [
      "unknown table",
      `[tool.local]\npath = "./tools"`,
      /\(top\): Unrecognized key: "tool" \(known: \[project\]/,
    ],
    [
      "unknown project key",
      `[project]\nname = "a"\nversion = "1"`,
      /project: Unrecognized key: "version" \(known: name\)/,
    ],
  ])("%s is INVALID_CONFIG naming the file", (_name, text, reason) => {
    expect(() => parseScienceToml(text, "/p/science.toml")).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringMatching(reason) }),
    );
    expect(() => parseScienceToml(text, "/p/science.toml")).toThrow(/\/p\/science\.toml/);
  });
});

test.each([
  ["", undefined],
  ["[run]\nnode_timeout_s = 900", 900_000],
  ["[run]\nnode_timeout_s = 0.25", 250],
])("the call deadline of %j is %s ms", (text, ms) => {
  expect(callTimeoutMs(parseScienceToml(text, "/p/science.toml"))).toBe(ms);
});

describe("parseScienceToml: reserved provider ids", () => {
  test.each(["toString", "valueOf", "__proto__", "constructor"])(
    "[tools.%s] is INVALID_CONFIG naming the file, the key and the fix, even beside a good provider",
    (id) => {
      const text = `[tools.good]\ncommand = "node good.js"\n\n[tools.${id}]\ncommand = "node server.js"\n`;
      expect(() => parseScienceToml(text, "/p/science.toml")).toThrow(
        expect.objectContaining({
          code: "INVALID_CONFIG",
          message: expect.stringMatching(
            new RegExp(`^/p/science.toml \\[tools.${id}\\] is a reserved name .*Rename the server`),
          ),
        }),
      );
    },
  );
});

describe("token_env named after an Object.prototype member", () => {
  test('token_env = "constructor" is unset in a plain env object, not Object.prototype.constructor', () => {
    const project = parseScienceToml(
      '[tools.lab]\nurl = "https://mcp.example.org/api"\ntoken_env = "constructor"\n',
      "/p/science.toml",
    );
    const [provider] = project.providers;
    expect(provider && providerToken(provider, {})).toBeUndefined();
    expect(provider && providerToken(provider, { constructor: "t0ken" })).toBe("t0ken");
    expect(() => assertProviderTokens(project, {})).toThrow(
      "Tool provider 'lab' needs constructor environment variable, which is not set.",
    );
  });
});
