/**
 * `sciencegate serve gateway` as a real process (the CLI from source through tsx), driven by the SDK's
 * stdio client: the bundled sources server (PubMed, against loopback fake providers) and the stdio test
 * server behind it, the ledger read from the process's data directory after it stopped.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { type FakeProviderServer, providerEnvFor, startFakeProviderServer } from "../../src/testing/index.js";
import { runCli } from "../cli/cli-harness.js";
import { PUBMED_FIXTURE_QUERY, pubmedFakeRoutes } from "../fixtures/providers/pubmed/routes.js";
import { GATEWAY_COMMAND, type GatewayProject, writeGatewayProject } from "./gateway-project.js";

/** A started gateway process and its SDK client. */
interface Served {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  listChanged: () => number;
  call: (name: string, args?: Record<string, unknown>, signal?: AbortSignal) => Promise<CallToolResult>;
}

async function serve(project: GatewayProject, extra: string[] = []): Promise<Served> {
  const transport = new StdioClientTransport({
    command: GATEWAY_COMMAND.command,
    args: [...GATEWAY_COMMAND.args, ...project.args, ...extra],
    env: project.env,
    cwd: project.dir,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "stdio-test-client", version: "1.0.0" });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => stderr,
    listChanged: () => changes,
    call: async (name, args = {}, signal) =>
      (await client.callTool(
        { name, arguments: args },
        undefined,
        signal ? { signal } : {},
      )) as CallToolResult,
  };
}

function textOf(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === "text" ? first.text : "";
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ledgerRows(project: GatewayProject) {
  const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
  try {
    return await ledger.query();
  } finally {
    await ledger.close();
  }
}

let providers: FakeProviderServer;
beforeAll(async () => {
  providers = await startFakeProviderServer({ routes: pubmedFakeRoutes() });
});
afterAll(async () => {
  await providers?.close();
});

describe("sciencegate serve gateway (stdio)", () => {
  test("a config that cannot be read exits 2 before serving, naming the file on stderr and writing nothing to stdout", async () => {
    const run = await runCli(["serve", "gateway", "--config", "/nonexistent/gateway.json"]);
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toContain("INVALID_CONFIG: /nonexistent/gateway.json");
  });

  test("an unknown option is a usage error (exit 2)", async () => {
    const run = await runCli(["serve", "gateway", "--port", "8080"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--port");
  });

  test("lists, promotes with list_changed, calls PubMed with citations, refuses with tool errors; stdin end closes the runtime and its servers", async () => {
    const project = writeGatewayProject({ sources: true, env: providerEnvFor(providers.url) });
    const served = await serve(project, ["--session", "desk-1"]);
    const gatewayPid = served.transport.pid as number;
    const names = async () => (await served.client.listTools()).tools.map((t) => t.name);

    expect(await names()).toEqual(["tool_search", "artifact_download", "paper_extract_pdf"]);
    expect(served.client.getInstructions()).toContain("mcp__pubmed__search");

    const found = await served.call("tool_search", {
      query: "select:mcp__pubmed__search,mcp__local__whoami,mcp__local__crash",
    });
    expect(found.isError).toBeUndefined();
    await vi.waitFor(() => expect(served.listChanged()).toBe(1));
    expect(await names()).toEqual([
      "tool_search",
      "artifact_download",
      "paper_extract_pdf",
      "mcp__pubmed__search",
      "mcp__local__whoami",
      "mcp__local__crash",
    ]);

    const papers = await served.call("mcp__pubmed__search", { query: PUBMED_FIXTURE_QUERY });
    expect(papers.isError).toBeUndefined();
    expect(textOf(papers)).toMatch(/\[PMID:\d+\]\(https:\/\/pubmed\.ncbi\.nlm\.nih\.gov\/\d+\/\)/);
    expect(papers.structuredContent).toMatchObject({
      sourceId: "pubmed",
      toolId: "search",
      records: expect.arrayContaining([expect.objectContaining({ contentScope: expect.any(String) })]),
    });

    const denied = await served.call("mcp__local__crash", { message: "no" });
    expect(denied).toMatchObject({ isError: true, structuredContent: { code: "PERMISSION_DENIED" } });
    const bad = await served.call("mcp__pubmed__search", { query: "" });
    expect(bad).toMatchObject({ isError: true, structuredContent: { code: "INVALID_INPUT" } });
    // An unknown tool is a protocol error (-32602), its refusal audited below.
    const unknown = await served.call("mcp__nowhere__tool", {}).catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: -32602 });
    const serverPid = Number(
      textOf(await served.call("mcp__local__whoami"))
        .split("\n")
        .at(-1),
    );
    expect(isRunning(serverPid)).toBe(true);

    await served.client.close();
    await vi.waitFor(() => expect(isRunning(gatewayPid)).toBe(false), { timeout: 10_000 });
    expect(served.stderr()).toContain("serving session desk-1 on stdio");
    expect(served.stderr()).toContain("stopping (stdin closed: the client left)");
    expect(served.stderr()).toContain("sciencegate gateway: stopped");
    expect(isRunning(serverPid)).toBe(false);

    const rows = await ledgerRows(project);
    expect(rows.every((row) => row.sessionId === "desk-1")).toBe(true);
    expect(rows.map((row) => [row.sourceId, row.toolId, row.status, row.error?.code]).sort()).toEqual(
      [
        ["local", "crash", "error", "PERMISSION_DENIED"],
        ["local", "whoami", "ok", undefined],
        ["nowhere", "tool", "error", "TOOL_UNAVAILABLE"],
        ["pubmed", "search", "error", "INVALID_INPUT"],
        ["pubmed", "search", "ok", undefined],
      ].sort(),
    );
  }, 90_000);

  test("--eager lists every allowed tool; a tool the server adds arrives with list_changed; a client's cancellation reaches the server; SIGTERM cancels a running call; both audited", async () => {
    const project = writeGatewayProject();
    const served = await serve(project, ["--eager"]);
    const gatewayPid = served.transport.pid as number;
    const names = async () => (await served.client.listTools()).tools.map((t) => t.name);
    const local = ["echo", "whoami", "stats", "slow", "add_tool", "crash"].map((t) => `mcp__local__${t}`);
    // Only the project's own server: nothing offers a download, so no artifact built-ins.
    expect(await names()).toEqual(["tool_search", ...local]);

    expect((await served.call("mcp__local__add_tool", { name: "late" })).isError).toBeUndefined();
    await vi.waitFor(() => expect(served.listChanged()).toBe(1), { timeout: 10_000 });
    expect(await names()).toContain("mcp__local__late");

    const stats = async () =>
      JSON.parse(
        textOf(await served.call("mcp__local__stats"))
          .split("\n")
          .at(-1) ?? "{}",
      ) as Record<string, number>;
    const slowCall = () => {
      const controller = new AbortController();
      const running = served.call("mcp__local__slow", { steps: 600, delayMs: 100 }, controller.signal);
      running.catch(() => undefined);
      return { running, controller };
    };
    const until = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 10_000, interval: 100 });

    const cancelled = slowCall();
    await until(async () => expect((await stats()).slowStarted).toBe(1));
    cancelled.controller.abort("the user stopped it");
    await expect(cancelled.running).rejects.toThrow();
    await until(async () => expect((await stats()).cancelled).toBe(1));

    const { running } = slowCall();
    await until(async () => expect((await stats()).slowStarted).toBe(2));
    process.kill(gatewayPid, "SIGTERM");
    await expect(running).rejects.toThrow();
    await vi.waitFor(() => expect(isRunning(gatewayPid)).toBe(false), { timeout: 10_000 });
    expect(served.stderr()).toContain("stopping (SIGTERM)");
    expect(served.stderr()).toContain("sciencegate gateway: stopped");
    await served.client.close();

    const slow = (await ledgerRows(project)).filter((row) => row.toolId === "slow");
    expect(slow).toMatchObject([
      { sourceId: "local", status: "error", error: { code: "CANCELLED" } },
      { sourceId: "local", status: "error", error: { code: "CANCELLED" } },
    ]);
    expect(slow[0]?.sessionId).toMatch(/^gateway:[0-9a-f-]{36}$/);
  }, 90_000);
});
