/**
 * A third-party MCP client drives `sciencegate serve gateway`: the MCP Inspector's CLI mode, configured
 * with the `mcpServers` JSON a desktop assistant uses. Each Inspector run is one short session, like a
 * client with a fixed tool table, so the call runs with `--eager`.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { REPO_ROOT, writeJson } from "../cli/cli-harness.js";
import { GATEWAY_COMMAND, type GatewayProject, writeGatewayProject } from "../gateway/gateway-project.js";

const INSPECTOR_CLI = join(REPO_ROOT, "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");

/** Runs `mcp-inspector --cli` against the gateway of `project`, as server `sciencegate` of its config file. */
async function inspect(project: GatewayProject, gatewayArgs: string[], method: string[]): Promise<unknown> {
  const config = writeJson(project.dir, `inspector-${gatewayArgs.join("")}.json`, {
    mcpServers: {
      sciencegate: {
        command: GATEWAY_COMMAND.command,
        args: [...GATEWAY_COMMAND.args, ...project.args, ...gatewayArgs],
        env: { SCIENCEGATE_HOME: project.dataDir },
      },
    },
  });
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [INSPECTOR_CLI, "--cli", "--config", config, "--server", "sciencegate", ...method],
    { cwd: project.dir, env: project.env, timeout: 60_000, killSignal: "SIGKILL" },
  );
  return JSON.parse(stdout);
}

describe("the MCP Inspector (CLI mode) as the gateway's client", () => {
  test("lists tool_search (no download built-ins: no source offers downloads), and with --eager calls a governed tool that lands in the ledger", async () => {
    const project = writeGatewayProject();
    const listed = (await inspect(project, [], ["--method", "tools/list"])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(["tool_search"]);

    const called = await inspect(
      project,
      ["--eager"],
      ["--method", "tools/call", "--tool-name", "mcp__local__echo", "--tool-arg", "text=hello inspector"],
    );
    expect(called).toMatchObject({
      content: [{ type: "text", text: expect.stringContaining("hello inspector") }],
      _meta: { "io.github.sciencegate/invocation": { sourceId: "local", toolId: "echo", untrusted: true } },
    });
    expect(called).not.toHaveProperty("isError");

    const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
    try {
      expect(await ledger.query()).toMatchObject([
        { sourceId: "local", toolId: "echo", status: "ok", sessionId: expect.stringMatching(/^gateway:/) },
      ]);
    } finally {
      await ledger.close();
    }
  }, 90_000);
});
