import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { loadExtensionsConfig } from "../../src/config/extensions-config.js";
import { type GovernanceError, isGovernanceError } from "../../src/core/errors.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sciencegate-config-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

async function loadError(options: Parameters<typeof loadExtensionsConfig>[0]): Promise<GovernanceError> {
  const error: unknown = await loadExtensionsConfig(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGovernanceError(error)) throw new Error(`expected a GovernanceError, got ${String(error)}`);
  expect(error.code).toBe("INVALID_CONFIG");
  return error;
}

const wiki = { mcpServers: { "llm-wiki": { command: "node", env: { URL: "$SCIENCE_AGENT_LLM_WIKI_URL" } } } };

describe("loadExtensionsConfig: which file", () => {
  test("reads extensions_config.json from cwd by default and substitutes the environment", async () => {
    const path = await write("extensions_config.json", wiki);
    const config = await loadExtensionsConfig({
      cwd: dir,
      env: { SCIENCE_AGENT_LLM_WIKI_URL: "http://h:1" },
    });
    expect(config.path).toBe(path);
    expect(config.servers[0]?.env).toEqual({ URL: "http://h:1" });
  });

  test.each([
    ["configPath", { configPath: "flag.json", env: { SCIENCEGATE_CONFIG: "sg.json" } }, "flag"],
    [
      "SCIENCEGATE_CONFIG",
      { env: { SCIENCEGATE_CONFIG: "sg.json", SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "seed.json" } },
      "sg",
    ],
    [
      "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH",
      { env: { SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "seed.json" } },
      "seed",
    ],
    ["the default file", { env: {} }, "default"],
  ])("%s is read when it has precedence", async (_name, options, expectedId) => {
    await write("flag.json", { mcpServers: { flag: { command: "a" } } });
    await write("sg.json", { mcpServers: { sg: { command: "a" } } });
    await write("seed.json", { mcpServers: { seed: { command: "a" } } });
    await write("extensions_config.json", { mcpServers: { default: { command: "a" } } });
    const config = await loadExtensionsConfig({ cwd: dir, ...options });
    expect(config.servers.map((s) => s.id)).toEqual([expectedId]);
  });

  test("a missing default file gives no servers", async () => {
    expect(await loadExtensionsConfig({ cwd: dir, env: {} })).toEqual({ servers: [] });
  });

  test("a missing default file is an error when a config is required", async () => {
    const error = await loadError({ cwd: dir, env: {}, required: true });
    expect(error.message).toBe(
      `${join(dir, "extensions_config.json")}: no config file was found. Create it with {"mcpServers": {...}}, pass --config FILE, or set SCIENCEGATE_CONFIG.`,
    );
  });

  test.each([
    ["--config", { configPath: "nope.json", env: {} }, "--config (configPath)"],
    ["SCIENCEGATE_CONFIG", { env: { SCIENCEGATE_CONFIG: "nope.json" } }, "SCIENCEGATE_CONFIG"],
    [
      "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH",
      { env: { SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH: "nope.json" } },
      "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH",
    ],
  ])(
    "a file named by %s that is missing is an error, even with a default file present",
    async (_n, options, by) => {
      await write("extensions_config.json", wiki);
      const error = await loadError({ cwd: dir, ...options });
      expect(error.message).toBe(
        `${join(dir, "nope.json")}: the file does not exist (named by ${by}). Create it, or correct the path.`,
      );
      expect(error.data).toMatchObject({ file: join(dir, "nope.json"), path: "" });
    },
  );
});

describe("loadExtensionsConfig: broken files", () => {
  test.each([
    ["a trailing comma", '{\n  "mcpServers": {\n    "a": {"command": "x"},\n  }\n}', /at line 4, column 3: /],
    [
      "a missing comma",
      '{"mcpServers": {"a": {"command": "x" "args": []}}}',
      /at line 1, column 38: Expected .,. or .}. after property value/,
    ],
    ["a missing colon", '{\n"mcpServers" {}}', /at line 2, column 14: Expected ':' after property name/],
  ])("invalid JSON with %s gives line and column", async (_name, text, where) => {
    const path = await write("extensions_config.json", text);
    const error = await loadError({ cwd: dir, env: {} });
    expect(error.message).toMatch(
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: the file is not valid JSON`),
    );
    expect(error.message).toMatch(where);
    expect(error.message).toMatch(/Fix the syntax there/);
  });

  test("invalid JSON without a position still names the file and the parser's reason", async () => {
    await write("extensions_config.json", '{"mcpServers": }');
    const error = await loadError({ cwd: dir, env: {} });
    expect(error.message).toMatch(/extensions_config.json: the file is not valid JSON: Unexpected token/);
  });

  test("an empty file says so", async () => {
    await write("extensions_config.json", "  \n");
    const error = await loadError({ cwd: dir, env: {} });
    expect(error.message).toMatch(/the file is empty, which is not valid JSON. Write \{"mcpServers": \{\}\}/);
  });

  test("a byte-order mark is tolerated", async () => {
    await write("extensions_config.json", `\uFEFF${JSON.stringify({ mcpServers: { a: { command: "x" } } })}`);
    expect((await loadExtensionsConfig({ cwd: dir, env: {} })).servers).toHaveLength(1);
  });

  test("a directory at the config path is an error, not an empty config", async () => {
    await mkdir(join(dir, "extensions_config.json"));
    const error = await loadError({ cwd: dir, env: {} });
    expect(error.message).toMatch(/the path is a directory, not a file/);
  });

  test("validation issues of the file are reported with its path", async () => {
    const path = await write("servers.json", {
      mcpServers: { pubmed: { command: "uvx", args: ["pubmed", 1] } },
    });
    const error = await loadError({ cwd: dir, env: {}, configPath: "servers.json" });
    expect(error.message).toBe(
      `${path}: mcpServers.pubmed.args[1] must be a string, not the number 1. Put the value in double quotes.`,
    );
    expect(error.data).toMatchObject({ file: path, path: "mcpServers.pubmed.args[1]" });
  });

  test("an unset variable of an enabled server fails the load, of a disabled one does not", async () => {
    await write("extensions_config.json", wiki);
    const error = await loadError({ cwd: dir, env: {} });
    expect(error.message).toMatch(
      /mcpServers.llm-wiki.env.URL needs environment variable SCIENCE_AGENT_LLM_WIKI_URL/,
    );
    await write("extensions_config.json", {
      mcpServers: { "llm-wiki": { ...wiki.mcpServers["llm-wiki"], enabled: false } },
    });
    const config = await loadExtensionsConfig({ cwd: dir, env: {} });
    expect(config.servers[0]?.enabled).toBe(false);
  });
});
