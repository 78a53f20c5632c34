/**
 * `sciencegate serve gateway --http` as a real process (the CLI from source through tsx), driven by the
 * SDK's Streamable HTTP client; the ledger read from the process's data directory after it stopped.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { runCli } from "../cli/cli-harness.js";
import { GATEWAY_COMMAND, type GatewayProject, writeGatewayProject } from "./gateway-project.js";
import { connectHttpClient, initializeBody, MCP_POST_HEADERS, rawRequest, textOf } from "./http-client.js";

const TOKEN = "cli-token-0123456789abcdef";

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

/** Starts the gateway process and waits for the URL it prints once listening. */
async function start(project: GatewayProject, extra: string[], env: Record<string, string> = {}) {
  const proc = spawn(GATEWAY_COMMAND.command, [...GATEWAY_COMMAND.args, ...project.args, ...extra], {
    cwd: project.dir,
    env: { ...project.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  let stderr = "";
  let stdout = "";
  proc.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  proc.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const url = await vi.waitFor(
    () => {
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (!match?.[1]) throw new Error(`not listening yet: ${stderr}`);
      return match[1];
    },
    { timeout: 30_000, interval: 100 },
  );
  return { proc, url, exited, stderr: () => stderr, stdout: () => stdout };
}

async function ledgerRows(project: GatewayProject) {
  const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
  try {
    return await ledger.query();
  } finally {
    await ledger.close();
  }
}

describe("sciencegate serve gateway --http: refused before anything starts (exit 2)", () => {
  test.each([
    ["a wildcard bind without a token", ["--http", "0.0.0.0:0"], "SCIENCEGATE_GATEWAY_TOKEN"],
    ["an address that is not [host:]port", ["--http", "localhost:http"], "--http takes [host:]port"],
    ["--session with --http", ["--http", "0", "--session", "s1"], "--session is for stdio"],
    ["--allow-origin without --http", ["--allow-origin", "http://localhost:6274"], "go with --http"],
    ["an origin that is not one", ["--http", "0", "--allow-origin", "localhost"], "not an http(s) origin"],
    ["a session limit without --http", ["--max-sessions", "5"], "go with --http"],
    [
      "a session limit of zero",
      ["--http", "0", "--max-sessions", "0"],
      "--max-sessions takes a positive whole number",
    ],
    [
      "a per-client limit that is not a number",
      ["--http", "0", "--max-sessions-per-client", "many"],
      "--max-sessions-per-client takes a positive whole number",
    ],
    ["an idle time with a unit", ["--http", "0", "--session-idle-ms", "5m"], "--session-idle-ms takes"],
    ["an approval wait of 1.5 ms", ["--approval-wait-ms", "1.5"], "--approval-wait-ms takes"],
  ])("%s", async (_name, args, message) => {
    const run = await runCli(["serve", "gateway", "--config", "/nonexistent/not-read.json", ...args]);
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toContain(message);
    // Refused before the runtime: the config file was never opened.
    expect(run.stderr).not.toContain("/nonexistent/not-read.json");
  });
});

describe("sciencegate serve gateway --http (process)", () => {
  test("--max-sessions-per-client and --approval-wait-ms are applied: a client's second session makes its idle first one go; an unanswered question is denied after the wait", async () => {
    const project = writeGatewayProject({ dangerousEcho: true });
    const served = await start(project, [
      "--http",
      "127.0.0.1:0",
      "--eager",
      "--max-sessions-per-client",
      "1",
      "--session-idle-ms",
      "600000",
      "--approval-wait-ms",
      "300",
    ]);
    expect(served.stderr()).toContain("at most 100 sessions, 1 per client");
    const first = await connectHttpClient(served.url);
    await first.toolNames();
    const transport = new StreamableHTTPClientTransport(new URL(served.url));
    const asked = new Client({ name: "asked", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    asked.setRequestHandler(ElicitRequestSchema, () => new Promise<never>(() => {}));
    await asked.connect(transport);
    await expect(first.client.listTools()).rejects.toMatchObject({ code: 404 });
    const started = Date.now();
    const result = (await asked.callTool({ name: "mcp__local__echo", arguments: { text: "x" } })) as {
      structuredContent?: unknown;
    };
    expect(result.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("nobody answered the approval request within 300 ms"),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    await Promise.all([first.client.close(), asked.close()]);
    served.proc.kill("SIGTERM");
    expect(await served.exited).toBe(0);
  }, 90_000);

  test("serves the SDK client with the bearer token; SIGTERM answers and audits the running call as CANCELLED, then exits 0", async () => {
    const project = writeGatewayProject();
    const served = await start(project, ["--http", "127.0.0.1:0"], { SCIENCEGATE_GATEWAY_TOKEN: TOKEN });
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.stderr()).toContain("bearer token from SCIENCEGATE_GATEWAY_TOKEN");

    const anonymous = await rawRequest(served.url, { headers: MCP_POST_HEADERS, body: initializeBody() });
    expect(anonymous.status).toBe(401);

    const a = await connectHttpClient(served.url, TOKEN);
    await a.call("tool_search", { query: "select:mcp__local__echo,mcp__local__slow,mcp__local__stats" });
    expect(a.listChanged()).toBe(1);
    expect(await a.toolNames()).toEqual([
      "tool_search",
      "mcp__local__echo",
      "mcp__local__stats",
      "mcp__local__slow",
    ]);
    expect(textOf(await a.call("mcp__local__echo", { text: "over http" }))).toContain("over http");

    const running = a.call("mcp__local__slow", { steps: 600, delayMs: 100 });
    running.catch(() => undefined);
    await vi.waitFor(
      async () => {
        const stats = JSON.parse(
          textOf(await a.call("mcp__local__stats"))
            .split("\n")
            .at(-1) ?? "{}",
        );
        expect(stats.slowStarted).toBe(1);
      },
      { timeout: 10_000, interval: 100 },
    );
    served.proc.kill("SIGTERM");
    await expect(running).rejects.toThrow("The gateway is shutting down");
    expect(await served.exited).toBe(0);
    expect(served.stderr()).toContain("stopping (SIGTERM)");
    expect(served.stderr()).toContain("sciencegate gateway: stopped");
    expect(served.stdout()).toBe("");

    const rows = await ledgerRows(project);
    const calls = rows.filter((row) => row.toolId !== "stats");
    expect(calls.map((row) => [row.toolId, row.status, row.error?.code]).sort()).toEqual([
      ["echo", "ok", undefined],
      ["slow", "error", "CANCELLED"],
    ]);
    // One governance session, whose id is not the transport's (which only its client knows).
    const sessions = [...new Set(rows.map((row) => row.sessionId))];
    expect(sessions).toEqual([expect.stringMatching(/^gateway:[0-9a-f-]{36}$/)]);
    expect(sessions[0]).not.toContain(a.mcpSessionId);
    expect(served.stderr()).not.toContain(a.mcpSessionId);
    await a.client.close();
  }, 90_000);
});
