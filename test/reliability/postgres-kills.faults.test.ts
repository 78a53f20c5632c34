/**
 * A PostgreSQL deployment whose connections are killed mid-stream (`npm run test:faults`): eight
 * callers invoke governed calls through `createGovernance(... storage.postgres ...)` while the server
 * terminates every backend of the calling process, again and again. Every call answered `ok` has its
 * row, every call that failed has its error row, and no row is there twice. And a database that stops
 * taking connections while a call runs: the call's row waits in the spool and lands once it answers.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import pg from "pg";
import { afterAll, describe, expect } from "vitest";
import { z } from "zod";
import { isGovernanceError } from "../../src/core/errors.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { useTestSchemas } from "../postgres/fresh-schema.js";
import { faultTest, printFaultSummary } from "./fault-report.js";

printFaultSummary("PostgreSQL connection kills (test/reliability/postgres-kills.faults.test.ts)");

const schemas = useTestSchemas();
const scratch = mkdtempSync(join(tmpdir(), "sciencegate-pg-kills-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CALLERS = 8;
const RUNS = 4;
const KILLS_PER_RUN = 20;

function server(): McpServer {
  const mcp = new McpServer({ name: "demo", version: "1.0.0" });
  mcp.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
    const result = demoResult("search", [query.replace(/\W/g, "") || "x"]);
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result as never };
  });
  return mcp;
}

/** One run: callers against a killer; what each call answered, and what the database holds after. */
async function run(index: number) {
  const url = await schemas.next();
  const dir = mkdtempSync(join(scratch, `run-${index}-`));
  const search = makeTool({ id: "search", routing: { keywords: [], mode: "off", priority: 0 } });
  writeFileSync(join(dir, "demo.json"), JSON.stringify(makeSource({ tools: [search] })));
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [dir] },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    env: {},
    storage: { postgres: url, dataDir: join(dir, "data") },
  });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const answers: { code: string; invocationId: string | undefined }[] = [];
  let stop = false;
  let killed = 0;
  const caller = async (c: number) => {
    for (let i = 0; !stop; i++) {
      const call = governance.broker.invoke({
        sourceId: "demo",
        toolId: "search",
        input: { query: `c${c} q${i}` },
        sessionId: `s-${c}`,
        threadId: `t-${c}`,
        toolCallId: `call-${i}`,
      });
      answers.push(
        await call.then(
          (outcome) => ({ code: "ok", invocationId: outcome.invocationId }),
          (error: unknown) => ({
            code: isGovernanceError(error) ? error.code : `raw ${String((error as { code?: unknown }).code)}`,
            invocationId: isGovernanceError(error)
              ? (error.data?.invocationId as string | undefined)
              : undefined,
          }),
        ),
      );
    }
  };
  const killer = async () => {
    for (let k = 0; k < KILLS_PER_RUN; k++) {
      await new Promise((resolve) => setTimeout(resolve, 40 + Math.random() * 60));
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'sciencegate' AND datname = current_database() AND pid <> pg_backend_pid()`,
      );
      killed += rowCount ?? 0;
    }
    stop = true;
  };
  try {
    await Promise.all([killer(), ...Array.from({ length: CALLERS }, (_, c) => caller(c))]);
    const { rows } = await admin.query<{ invocation_id: string; thread_id: string; tool_call_id: string }>(
      "SELECT invocation_id, thread_id, tool_call_id FROM sciencegate_invocations",
    );
    return { answers, rows, killed };
  } finally {
    await admin.end();
    await governance.close();
  }
}

describe("PostgreSQL connections killed under eight callers", () => {
  faultTest(
    "connection kills mid-stream",
    `${RUNS} runs × ${CALLERS} callers, ${KILLS_PER_RUN} × pg_terminate_backend of every backend of the calling process`,
    async () => {
      const lines: string[] = [];
      let lost = 0;
      for (let i = 0; i < RUNS; i++) {
        const { answers, rows, killed } = await run(i);
        const stored = new Map(rows.map((row) => [row.invocation_id, row]));
        const ok = answers.filter((a) => a.code === "ok");
        const missing = answers.filter((a) => a.invocationId === undefined || !stored.has(a.invocationId));
        lost += missing.length;
        // No row twice: every row's call key is distinct (and ids are the table's key).
        const keys = new Set(rows.map((row) => `${row.thread_id}:${row.tool_call_id}`));
        expect(keys.size, `run ${i}: a call key has two rows`).toBe(rows.length);
        expect(rows.length, `run ${i}: rows that no answer names`).toBe(answers.length);
        expect(killed, `run ${i}: the killer ended no connection`).toBeGreaterThan(0);
        const codes = [...new Set(answers.map((a) => a.code))].sort().join(", ");
        lines.push(
          `run ${i}: ${answers.length} calls (${ok.length} ok; ${codes}), ${rows.length} rows, ${missing.length} without a row, ${killed} backends killed`,
        );
      }
      expect(lost, lines.join("; ")).toBe(0);
      return lines.join("; ");
    },
    300_000,
  );
});

describe("PostgreSQL that stops taking connections while a call runs", () => {
  faultTest(
    "database unreachable after the side effect",
    "a call's tool runs, then the database refuses every new connection (its role may no longer log in) and its sessions are ended; later it takes them again",
    async () => {
      const url = await schemas.next();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const schema = (await admin.query<{ s: string }>("SELECT current_schema() AS s")).rows[0]?.s as string;
      const role = `outage_${Math.random().toString(36).slice(2, 8)}`;
      await admin.query(
        `CREATE ROLE ${role} LOGIN PASSWORD 'outage'; GRANT ALL ON SCHEMA ${schema} TO ${role}`,
      );
      const roleUrl = new URL(url);
      roleUrl.username = role;
      roleUrl.password = "outage";
      const dir = mkdtempSync(join(scratch, "outage-"));
      const search = makeTool({ id: "search", routing: { keywords: [], mode: "off", priority: 0 } });
      writeFileSync(join(dir, "demo.json"), JSON.stringify(makeSource({ tools: [search] })));
      let release: () => void = () => undefined;
      const running = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started: () => void = () => undefined;
      const ran = new Promise<void>((resolve) => {
        started = resolve;
      });
      const effects: string[] = [];
      const held = () => {
        const mcp = new McpServer({ name: "demo", version: "1.0.0" });
        mcp.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
          effects.push(query);
          started();
          await running;
          const result = demoResult("search", ["held"]);
          return {
            content: [{ type: "text", text: JSON.stringify(result) }],
            structuredContent: result as never,
          };
        });
        return mcp;
      };
      const dataDir = join(dir, "data");
      const governance = await createGovernance({
        config: { servers: [] },
        manifests: { builtin: false, dirs: [dir] },
        mcp: { pool: createInMemoryPool({ demo: held }) },
        env: {},
        storage: { postgres: roleUrl.toString(), dataDir },
        onWarning: () => undefined,
      });
      try {
        const call = governance.broker.invoke({
          sourceId: "demo",
          toolId: "search",
          input: { query: "side effect" },
          sessionId: "s-outage",
          threadId: "t-outage",
          toolCallId: "c-1",
        });
        await ran;
        await admin.query(`ALTER ROLE ${role} NOLOGIN`);
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [
          role,
        ]);
        release();
        const outcome = await call;
        expect(effects).toEqual(["side effect"]);
        const inDatabase = async () =>
          (
            await admin.query("SELECT 1 FROM sciencegate_invocations WHERE invocation_id = $1", [
              outcome.invocationId,
            ])
          ).rowCount;
        expect(await inDatabase()).toBe(0);
        const spool = join(dataDir, "ledger-spool");
        const [folder] = readdirSync(spool);
        const spooled = readdirSync(join(spool, folder as string));
        expect(spooled.length).toBeGreaterThan(0);
        await admin.query(`ALTER ROLE ${role} LOGIN`);
        // The writer replays on its own once the database answers; close() tries once more.
        await governance.close();
        expect(await inDatabase()).toBe(1);
        expect(readdirSync(join(spool, folder as string))).toEqual([]);
        return `the call answered ok (its tool ran once); its row waited in ${spooled.length} spooled batch file(s), then 1 row in the database, spool empty`;
      } finally {
        await governance.close();
        await admin.query(`ALTER ROLE ${role} LOGIN`).catch(() => undefined);
        await admin.end();
      }
    },
    120_000,
  );
});
