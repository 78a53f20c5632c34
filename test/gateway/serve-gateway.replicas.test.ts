/**
 * Two `sciencegate serve gateway --http` processes on one real PostgreSQL (`SCIENCEGATE_DATABASE_URL`,
 * the same `SCIENCEGATE_REQUEST_STATE_SECRET`, each its own data directory): a 2026-07-28 client's
 * approval gets its first round trip on replica A, A is killed with SIGKILL, and the retry with the
 * answer on replica B runs the call exactly once: one upstream call (the test server's call log, which
 * both replicas' servers append to), one ledger row, one authorization; the same retry again is refused.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, expect, test, vi } from "vitest";
import { openPostgres } from "../../src/core/index.js";
import { PostgresLedger } from "../../src/governance/audit/index.js";
import { runCli, tempDir } from "../cli/cli-harness.js";
import { effectsFile } from "../mcp/upstream-fixture.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import { GATEWAY_COMMAND, type GatewayProject, writeGatewayProject } from "./gateway-project.js";

const ECHO = "mcp__local__echo";
const SECRET = "the replicas' shared request-state secret, 32+ bytes";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const children: ChildProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** One replica: the gateway process with its own data directory, listening on a free port. */
async function replica(project: GatewayProject, env: Record<string, string>) {
  const proc = spawn(
    GATEWAY_COMMAND.command,
    [...GATEWAY_COMMAND.args, ...project.args, "--http", "127.0.0.1:0"],
    {
      cwd: project.dir,
      env: { ...project.env, SCIENCEGATE_HOME: tempDir(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(proc);
  let stderr = "";
  proc.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    proc.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  const url = await vi.waitFor(
    () => {
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (!match?.[1]) throw new Error(`not listening yet: ${stderr}`);
      return match[1];
    },
    { timeout: 60_000, interval: 100 },
  );
  return { proc, url, exited, stderr: () => stderr };
}

async function client(url: string) {
  const c = new Client(
    { name: "replica-client", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: false },
    },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { "Sciencegate-Conversation": "killed" } },
    }),
  );
  closers.push(() => c.close());
  return c;
}

function upstreamCalls(log: string): { pid: number; name: string; arguments: unknown }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

test("a 2026-07-28 upstream server's round: asked through A, A SIGKILLed, answered through B: the effect once, one row", async () => {
  const database = await server.createDatabase();
  const effects = effectsFile();
  const project = writeGatewayProject({ upstreamEffects: effects.path });
  const env = { SCIENCEGATE_DATABASE_URL: database, SCIENCEGATE_REQUEST_STATE_SECRET: SECRET };
  const [a, b] = await Promise.all([replica(project, env), replica(project, env)]);
  const call = (by: Client, extra: Record<string, unknown> = {}) =>
    by.callTool({ name: "mcp__up__confirm_action", arguments: { action: "launch" }, ...extra } as never, {
      allowInputRequired: true,
    }) as unknown as Promise<{
      resultType?: string;
      requestState: string;
      inputRequests: Record<string, { params: { message?: string } }>;
      content?: Array<{ text?: string }>;
    }>;

  const onA = await client(a.url);
  await onA.callTool({ name: "tool_search", arguments: { query: "select:mcp__up__confirm_action" } });
  const approval = await call(onA);
  expect(Object.keys(approval.inputRequests)).toEqual(["approval"]);
  const asked = await call(onA, {
    inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
    requestState: approval.requestState,
  });
  expect(asked.inputRequests.upstream_1?.params.message).toBe("Really launch?");
  a.proc.kill("SIGKILL");
  expect(await a.exited).toBe("SIGKILL");

  const answer = {
    inputResponses: { upstream_1: { action: "accept", content: { confirm: true } } },
    requestState: asked.requestState,
  };
  const onB = await client(b.url);
  const done = await call(onB, answer);
  expect(done.content?.map((c) => c.text).join("")).toBe("done: launch");
  await expect(call(onB, answer)).rejects.toMatchObject({ code: -32602 });
  expect(effects.lines().filter((line) => line.startsWith("effect confirm_action"))).toEqual([
    "effect confirm_action launch",
  ]);
  const db = await openPostgres(database, { maxConnections: 1 });
  try {
    const ledger = await PostgresLedger.open(db);
    expect((await ledger.query({ toolId: "confirm_action" })).map((row) => row.status)).toEqual(["ok"]);
    await ledger.close();
  } finally {
    await db.close();
  }
}, 120_000);

test("first round trip on A, A SIGKILLed, retry on B: one upstream call, one ledger row, one authorization; the replay is refused", async () => {
  const database = await server.createDatabase();
  const log = join(tempDir(), "calls.jsonl");
  const project = writeGatewayProject({ dangerousEcho: true, serverEnv: { TEST_SERVER_CALL_LOG: log } });
  const env = { SCIENCEGATE_DATABASE_URL: database, SCIENCEGATE_REQUEST_STATE_SECRET: SECRET };
  const [a, b] = await Promise.all([replica(project, env), replica(project, env)]);
  expect(a.stderr()).not.toContain("SCIENCEGATE_REQUEST_STATE_SECRET is not set");

  const onA = await client(a.url);
  await onA.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
  const round = (await onA.callTool(
    { name: ECHO, arguments: { text: "once" } },
    { allowInputRequired: true },
  )) as unknown as { resultType: string; requestState: string };
  expect(round.resultType).toBe("input_required");
  expect(upstreamCalls(log).filter((call) => call.name === "echo")).toEqual([]);

  a.proc.kill("SIGKILL");
  expect(await a.exited).toBe("SIGKILL");

  const onB = await client(b.url);
  // The promotion made on A is the conversation's, in PostgreSQL: B lists the tool.
  expect((await onB.listTools()).tools.map((tool) => tool.name)).toContain(ECHO);
  const retry = {
    name: ECHO,
    arguments: { text: "once" },
    inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
    requestState: round.requestState,
  };
  const result = (await onB.callTool(retry as never, { allowInputRequired: true })) as {
    isError?: boolean;
    content: unknown;
  };
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  expect(JSON.stringify(result.content)).toContain("once");

  // The same retry again on B: refused, nothing more runs.
  await expect(onB.callTool(retry as never, { allowInputRequired: true })).rejects.toMatchObject({
    code: -32602,
  });

  const echoes = upstreamCalls(log).filter((call) => call.name === "echo");
  expect(echoes).toHaveLength(1);
  expect(echoes[0]?.arguments).toEqual({ text: "once" });

  const db = await openPostgres(database, { maxConnections: 1 });
  try {
    const ledger = await PostgresLedger.open(db);
    const rows = await ledger.query({ toolId: "echo" });
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
    const authorizations = await ledger.listAuthorizations({});
    expect(authorizations.map((auth) => auth.decisionSource)).toEqual(["user_once"]);
    expect(rows[0]?.authorizationId).toBe(authorizations[0]?.id);
    await ledger.close();
  } finally {
    await db.close();
  }
  b.proc.kill("SIGTERM");
  expect(await b.exited).toBe(0);
  expect(b.stderr()).toContain("sciencegate gateway: stopped");
}, 150_000);

test("the secret: a short one is refused before anything starts; without one, a replica on PostgreSQL warns", async () => {
  const short = await runCli(["serve", "gateway", "--config", "/nonexistent/not-read.json", "--http", "0"], {
    SCIENCEGATE_REQUEST_STATE_SECRET: "too short",
  });
  expect(short).toMatchObject({ code: 2, stdout: "" });
  expect(short.stderr).toContain("SCIENCEGATE_REQUEST_STATE_SECRET must be at least 32 bytes");
  expect(short.stderr).not.toContain("too short");
  expect(short.stderr).not.toContain("/nonexistent/not-read.json");

  const project = writeGatewayProject();
  const database = await server.createDatabase();
  const warned = await replica(project, { SCIENCEGATE_DATABASE_URL: database });
  expect(warned.stderr()).toContain("SCIENCEGATE_REQUEST_STATE_SECRET is not set");
  warned.proc.kill("SIGTERM");
  expect(await warned.exited).toBe(0);
  expect(warned.stderr()).toContain("sciencegate gateway: stopped");
}, 90_000);
