/**
 * A runtime that is never closed does not keep its process alive with a streamable HTTP server or
 * PostgreSQL either: a script that creates governance over an MCP server on loopback (served by this
 * test process), with its ledger in SQLite or in PostgreSQL, makes its calls, leaves the last one
 * running without awaiting it and ends without `close()`, exits by itself within seconds of its last
 * await, and every call, the last one included, has its row in the ledger (read back here).
 */

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { openPostgres } from "../../src/core/open-postgres.js";
import type { InvocationRecord } from "../../src/governance/audit/ledger.js";
import { PostgresLedger } from "../../src/governance/audit/postgres-ledger.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { repoRoot } from "../mcp/server-configs.js";
import { useTestSchemas } from "../postgres/fresh-schema.js";

const TSX = import.meta.resolve("tsx");
/** How long after its last await the script may take to exit ("within a few seconds"). */
const EXIT_WITHIN_MS = 5_000;
/** When the test gives up on a script that does not exit (and kills it). */
const GIVE_UP_MS = 20_000;
/** Calls the script awaits; one more runs, not awaited, when the script ends. */
const AWAITED_CALLS = 5;

const schemas = useTestSchemas();

/**
 * An MCP server on loopback, over streamable HTTP (`/mcp`) and SSE (`/sse`): `echo`, and `slow` that
 * answers after `delayMs`.
 */
async function startHttpServer(): Promise<{ url: string; sseUrl: string; stop(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const sseSessions = new Map<string, SSEServerTransport>();
  const mcpServer = () => {
    const mcp = new McpServer({ name: "remote", version: "1.0.0" });
    mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text: `echo: ${text}` }],
    }));
    mcp.registerTool("slow", { inputSchema: { delayMs: z.number() } }, async ({ delayMs }) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { content: [{ type: "text", text: `slept ${delayMs}` }] };
    });
    return mcp;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (req.method === "GET" && path === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sseSessions.set(transport.sessionId, transport);
      await mcpServer().connect(transport);
      return;
    }
    if (path === "/messages") {
      const id = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("sessionId") ?? "";
      await sseSessions.get(id)?.handlePostMessage(req, res);
      return;
    }
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      await mcpServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The script: governance over the HTTP server (its ledger in `dataDir`, or in PostgreSQL at
 * `postgresUrl`), `AWAITED_CALLS` awaited calls, then one `slow` call left running; never closed.
 */
function unclosedScript(
  transport: "http" | "sse",
  serverUrl: string,
  dataDir: string,
  postgresUrl: string | undefined,
): string {
  const runtime = pathToFileURL(join(repoRoot, "src/runtime/create-governance.ts")).href;
  return `
import { createGovernance } from ${JSON.stringify(runtime)};
const governance = await createGovernance({
  config: { mcpServers: { remote: { transport: ${JSON.stringify(transport)}, url: ${JSON.stringify(serverUrl)} } } },
  manifests: { builtin: false },
  storage: { dataDir: ${JSON.stringify(dataDir)}${postgresUrl ? `, postgres: ${JSON.stringify(postgresUrl)}` : ""} },
  env: {},
  permissions: { authorize: () => ({ allowed: true }) },
});
const ids = [];
for (let i = 0; i < ${AWAITED_CALLS}; i++) {
  const outcome = await governance.broker.invoke({ sourceId: "remote", toolId: "echo", input: { text: "call " + i }, sessionId: "s1" });
  ids.push(outcome.invocationId);
}
// Left running: the process must wait for it and its row.
void governance.broker.invoke({ sourceId: "remote", toolId: "slow", input: { delayMs: 1000 }, sessionId: "s1" });
console.log(JSON.stringify({ ids, at: Date.now() }));
process.on("exit", () => console.log(JSON.stringify({ exitAt: Date.now() })));
`;
}

interface ScriptRun {
  /** What the script printed after its last await. */
  last: { ids: string[]; at: number };
  /** When the script's process began to exit, by its own clock (its `exit` event). */
  exitAt: number | undefined;
  /** When the process ended, or `undefined` when it had to be killed. */
  exitedAt: number | undefined;
  code: number | null;
  stderr: string;
}

async function runScript(source: string): Promise<ScriptRun> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-lifecycle-"));
  const script = join(dir, "unclosed.mts");
  await writeFile(script, source);
  const child = spawn(process.execPath, ["--import", TSX, script], { cwd: repoRoot, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let killed = false;
  const kill = () => {
    killed = true;
    child.kill("SIGKILL");
  };
  let deadline = setTimeout(kill, GIVE_UP_MS + 60_000);
  await new Promise<void>((resolve) => {
    child.stdout.on("data", () => {
      if (stdout.includes("\n")) resolve();
    });
    void closed.then(() => resolve());
  });
  // From the script's last await on, it has GIVE_UP_MS to end by itself.
  clearTimeout(deadline);
  deadline = setTimeout(kill, GIVE_UP_MS);
  const code = await closed;
  const exitedAt = killed ? undefined : Date.now();
  clearTimeout(deadline);
  const lines = stdout.split("\n").filter((l) => l.startsWith("{"));
  if (!lines[0]) throw new Error(`the script printed nothing: ${stderr}`);
  const exit = lines[1] === undefined ? undefined : (JSON.parse(lines[1]) as { exitAt: number });
  return { last: JSON.parse(lines[0]) as ScriptRun["last"], exitAt: exit?.exitAt, exitedAt, code, stderr };
}

describe("an unclosed runtime over an HTTP server", () => {
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  beforeAll(async () => {
    server = await startHttpServer();
  });
  afterAll(() => server.stop());

  // Over SSE every answer, the left-running call's too, arrives on the event stream.
  test.each([
    ["streamable HTTP", "SQLite"],
    ["streamable HTTP", "PostgreSQL"],
    ["SSE", "SQLite"],
  ] as const)(
    "over %s, with its ledger in %s: the script exits within seconds of its last await, every row recorded",
    { timeout: 120_000 },
    async (kind, store) => {
      const onPostgres = store === "PostgreSQL";
      const transport = kind === "SSE" ? "sse" : "http";
      const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-lifecycle-data-"));
      const postgresUrl = onPostgres ? await schemas.next() : undefined;
      const serverUrl = transport === "sse" ? server.sseUrl : server.url;
      const run = await runScript(unclosedScript(transport, serverUrl, dataDir, postgresUrl));
      expect(run.exitedAt, `the process did not exit within ${GIVE_UP_MS} ms: ${run.stderr}`).toBeDefined();
      expect(run.code, run.stderr).toBe(0);
      // Timed by the script's own clock: a loaded machine's process start-up and teardown do not count.
      expect((run.exitAt ?? Number.POSITIVE_INFINITY) - run.last.at).toBeLessThan(EXIT_WITHIN_MS);
      expect(run.stderr).toBe("");
      let rows: InvocationRecord[];
      if (postgresUrl) {
        const db = await openPostgres(postgresUrl, { maxConnections: 2 });
        try {
          const ledger = await PostgresLedger.open(db);
          rows = await ledger.query({ limit: 100 });
          await ledger.close();
        } finally {
          await db.close();
        }
      } else {
        const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
        try {
          rows = await ledger.query({ limit: 100 });
        } finally {
          await ledger.close();
        }
      }
      expect(rows).toHaveLength(AWAITED_CALLS + 1);
      expect(rows.every((row) => row.status === "ok")).toBe(true);
      expect(rows.filter((row) => row.toolId === "slow")).toHaveLength(1);
      expect(new Set(rows.map((row) => row.invocationId)).size).toBe(AWAITED_CALLS + 1);
      for (const id of run.last.ids) expect(rows.some((row) => row.invocationId === id)).toBe(true);
    },
  );
});
