/**
 * The MCP Inspector's CLI mode against `sciencegate serve gateway` in front of the real third-party
 * `@modelcontextprotocol/server-everything`, beside the same Inspector run against server-everything
 * directly: tools, a call, prompts and a resource read come out as the server gives them, and each
 * governed call or read is a ledger row.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, test } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { EVERYTHING_SERVER, REPO_ROOT, tempDir, writeJson } from "../cli/cli-harness.js";
import { GATEWAY_COMMAND } from "../gateway/gateway-project.js";

const INSPECTOR_CLI = join(REPO_ROOT, "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
const EVERYTHING = { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] };

let dir: string;
let dataDir: string;
let inspectorConfig: string;

beforeAll(() => {
  dir = tempDir();
  dataDir = join(dir, ".sciencegate");
  const gatewayConfig = writeJson(dir, "extensions_config.json", { mcpServers: { everything: EVERYTHING } });
  inspectorConfig = writeJson(dir, "inspector.json", {
    mcpServers: {
      // Each Inspector run is one short session: --eager lists every tool at once, --upstream-names
      // keeps the server's own names, as a direct client sees them.
      gateway: {
        command: GATEWAY_COMMAND.command,
        args: [...GATEWAY_COMMAND.args, "--config", gatewayConfig, "--eager", "--upstream-names"],
        env: { SCIENCEGATE_HOME: dataDir },
      },
      direct: EVERYTHING,
    },
  });
});

/** One `mcp-inspector --cli` run against server `gateway` or `direct` of the Inspector's config. */
async function inspect(server: "gateway" | "direct", method: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [INSPECTOR_CLI, "--cli", "--config", inspectorConfig, "--server", server, ...method],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", SCIENCEGATE_HOME: dataDir },
      timeout: 60_000,
      killSignal: "SIGKILL",
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Both runs of one method, one after the other (two processes each are enough for two cores). */
async function both(method: string[]) {
  const through = await inspect("gateway", method);
  const direct = await inspect("direct", method);
  return { through, direct };
}

describe("the MCP Inspector (CLI) against server-everything behind the gateway", () => {
  test("tools/list: every tool of the server, as the server describes it, beside the gateway's tool_search", async () => {
    const { through, direct } = await both(["--method", "tools/list"]);
    const own = direct.tools as { name: string; description?: string; inputSchema: unknown }[];
    const listed = through.tools as { name: string; description?: string; inputSchema: unknown }[];
    expect(own.length).toBeGreaterThan(5);
    const byName = new Map(listed.map((tool) => [tool.name, tool]));
    for (const tool of own) {
      expect(byName.get(tool.name), tool.name).toMatchObject({
        name: tool.name,
        inputSchema: tool.inputSchema,
      });
    }
    expect(listed.map((tool) => tool.name)).toContain("tool_search");
  }, 180_000);

  test("tools/call: echo answers as directly, governed, with its ledger row", async () => {
    const call = ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello everything"];
    const { through, direct } = await both(call);
    expect(direct.content).toEqual([{ type: "text", text: "Echo: hello everything" }]);
    expect(through.content).toEqual(direct.content);
    expect(through).not.toHaveProperty("isError");
    expect(through._meta).toMatchObject({
      "io.github.sciencegate/invocation": { sourceId: "everything", toolId: "echo" },
    });
    const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
    try {
      expect(await ledger.query({})).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ sourceId: "everything", toolId: "echo", status: "ok" }),
        ]),
      );
    } finally {
      await ledger.close();
    }
  }, 180_000);

  test("prompts/list and prompts/get, then resources/read: as the server gives them, each read in the ledger", async () => {
    const prompts = await both(["--method", "prompts/list"]);
    expect(prompts.through.prompts).toEqual(prompts.direct.prompts);
    const get = ["--method", "prompts/get", "--prompt-name", "args-prompt"];
    const args = ["--prompt-args", "city=Lyon", "state=Rhone"];
    const got = await both([...get, ...args]);
    expect(JSON.stringify(got.direct)).toContain("Lyon");
    expect(got.through).toEqual(got.direct);
    const resources = (await inspect("direct", ["--method", "resources/list"])).resources as {
      uri: string;
    }[];
    const uri = resources[0]?.uri ?? "";
    const read = await both(["--method", "resources/read", "--uri", uri]);
    expect((read.direct.contents as unknown[]).length).toBeGreaterThan(0);
    expect(read.through).toEqual(read.direct);
    const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
    try {
      const rows = await ledger.query({});
      const reads = rows.filter((row) => row.sourceId === "everything" && row.toolId.includes("/"));
      // Each Inspector run also sets the server's log level at connect: that is a row too.
      expect(new Set(reads.map((row) => row.toolId))).toEqual(
        new Set(["prompts/get", "resources/read", "logging/setLevel"]),
      );
      expect(reads.find((row) => row.toolId === "resources/read")?.mcpToolName).toBe(uri);
      expect(reads.every((row) => row.status === "ok")).toBe(true);
    } finally {
      await ledger.close();
    }
  }, 240_000);
});
