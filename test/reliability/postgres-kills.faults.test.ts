/**
 * A PostgreSQL deployment whose connections are killed mid-stream (`npm run test:faults`): eight
 * callers invoke governed calls through `createGovernance(... storage.postgres ...)` while the server
 * terminates every backend of the calling process, again and again. Every call answered `ok` has its
 * row, every call that failed has its error row, and no row is there twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
    builtinManifests: false,
    manifestDirs: [dir],
    pool: createInMemoryPool({ demo: server }),
    dataDir: join(dir, "data"),
    env: {},
    storage: { postgres: url },
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
        session: `s-${c}`,
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
