/**
 * `createGovernance` with its state in PostgreSQL: two runtimes on one database are two replicas of
 * one app. What one records, the other sees and replays; neither writes SQLite files; close() leaves
 * no connection open.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { checkStoreIntegrity } from "../../src/governance/audit/store-integrity.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { mergeGovernanceOptions } from "../../src/runtime/index.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { schemaUrls } from "../postgres/fresh-schema.js";
import { freePort, openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
let schemas: { next(): Promise<string> };
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-governance-pg-"));
const manifests = join(scratch, "manifests");
beforeAll(async () => {
  server = await openTestPostgres();
  schemas = schemaUrls(await server.createDatabase());
  await rm(manifests, { recursive: true, force: true });
  await mkdir(manifests);
  await writeFile(
    join(manifests, "demo.json"),
    JSON.stringify(
      makeSource({
        tools: [
          makeTool({
            id: "search",
            inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
          }),
        ],
      }),
    ),
  );
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** One replica: an in-memory MCP server counting its calls, the app's data directory, the database. */
async function replica(options: GovernanceOptions, dataDir: string, hold?: Promise<void>) {
  const calls: string[] = [];
  const demo = () => {
    const mcp = new McpServer({ name: "demo", version: "1.0.0" });
    mcp.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
      calls.push(query);
      await hold;
      const result = demoResult("search", [query]);
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result as never,
      };
    });
    return mcp;
  };
  const governance = await createGovernance(
    mergeGovernanceOptions(
      {
        config: { servers: [] },
        manifests: { builtin: false, dirs: [manifests] },
        mcp: { pool: createInMemoryPool({ demo }) },
        storage: { dataDir },
        env: {},
      },
      options,
    ),
  );
  return { governance, calls };
}

const search = (query: string, toolCallId: string) => ({
  sourceId: "demo",
  toolId: "search",
  input: { query },
  sessionId: "thread-1",
  threadId: "thread-1",
  toolCallId,
});

/** Callers of every replica queued in rate-limit group `group` of the database of `url`. */
async function queuedIn(url: string, group: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM sciencegate_rate_limit_waiters WHERE group_name = $1 AND kind = 'admit'",
      [group],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** Connections the runtimes hold to the database of `url`. */
async function connectionsTo(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'sciencegate'",
    );
    return rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

describe("createGovernance({ storage: { postgres } })", () => {
  test("a governed call on one replica is a row the second replica reads, replays and verifies", async () => {
    const url = await schemas.next();
    const shared = join(scratch, "shared-volume");
    const first = await replica({ storage: { postgres: url, maxConnections: 3 } }, shared);
    // The second replica finds the database through the environment, as a deployed server does.
    const second = await replica({ env: { SCIENCEGATE_DATABASE_URL: url } }, shared);
    const runtimes: Governance[] = [first.governance, second.governance];
    try {
      const done = await first.governance.broker.invoke(search("brca1", "call-1"));
      expect(first.calls).toEqual(["brca1"]);
      // The row is committed when the call returns: the other replica reads it at once.
      const row = await second.governance.ledger.get(done.invocationId);
      expect(row).toMatchObject({ sourceId: "demo", toolId: "search", status: "ok", threadId: "thread-1" });
      // The result was small: it lives in PostgreSQL with the row, readable from the other replica.
      expect(await second.governance.store.getJson(row?.normalizedRef ?? "")).toEqual(done.result);

      const report = await checkStoreIntegrity(second.governance, { sweepTemps: false });
      expect(report).toMatchObject({ rows: 1, missing: [], corrupt: [], ok: true });
      expect(report.inlineRefs).toBeGreaterThan(0);

      const replayed = await second.governance.broker.invoke(search("brca1", "call-1"));
      expect(replayed).toMatchObject({ invocationId: done.invocationId, replayed: true });
      expect(second.calls).toEqual([]);

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query("SELECT invocation_id FROM sciencegate_invocations");
      await client.end();
      expect(rows).toEqual([{ invocation_id: done.invocationId }]);

      for (const file of ["ledger.sqlite", "grants.sqlite", "jobs.sqlite"]) {
        expect(existsSync(join(shared, file)), file).toBe(false);
      }
      expect(await connectionsTo(url)).toBeGreaterThan(0);
    } finally {
      await Promise.all(runtimes.map((g) => g.close()));
    }
    expect(await connectionsTo(url)).toBe(0);
  });

  test("one rate limit for both replicas: a call on B waits while A's call holds the group's only slot", async () => {
    const url = await schemas.next();
    const limits: GovernanceOptions = {
      storage: { postgres: url },
      limits: { rateLimits: { demo: { maxConcurrentRequests: 1 } } },
    };
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = await replica(limits, join(scratch, "limit-a"), held);
    const b = await replica(limits, join(scratch, "limit-b"));
    try {
      const first = a.governance.broker.invoke(search("held", "limit-1"));
      while (a.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      let secondDone = false;
      const second = b.governance.broker.invoke(search("waits", "limit-2")).then((outcome) => {
        secondDone = true;
        return outcome;
      });
      // B queues in the group A holds, in the shared database. In memory, B would have its own slot
      // and answer at once: no row would ever come.
      const deadline = performance.now() + 10_000;
      while ((await queuedIn(url, "demo")) === 0) {
        if (performance.now() > deadline) throw new Error("B never queued in the shared group");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(b.calls).toEqual([]);
      expect(secondDone).toBe(false);
      release();
      await first;
      const outcome = await second;
      expect(b.calls).toEqual(["waits"]);
      expect(outcome.queueWaitMs).toBeGreaterThan(0);
    } finally {
      release();
      await Promise.all([a.governance.close(), b.governance.close()]);
    }
  });

  test("an explicit ledger still wins; the grants, jobs, rate limits, session state and OAuth credentials go to the database", async () => {
    const url = await schemas.next();
    const ledger = new MemoryLedger();
    const { governance } = await replica({ storage: { postgres: url, ledger } }, join(scratch, "own-ledger"));
    try {
      expect(governance.ledger).toBe(ledger);
      await governance.broker.invoke(search("tp53", "call-2"));
      expect(await ledger.query()).toHaveLength(1);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query("SELECT store FROM sciencegate_schema_versions ORDER BY store");
      await client.end();
      expect(rows.map((r) => r.store)).toEqual([
        "download_jobs",
        "grants",
        "oauth_credentials",
        "rate-limits",
        "session-state",
      ]);
    } finally {
      await governance.close();
    }
  });

  test.each<[string, GovernanceOptions]>([
    ["a pool bound of 0", { storage: { postgres: "postgres://x@127.0.0.1/db", maxConnections: 0 } }],
    ["a pool bound without a database", { storage: { maxConnections: 4 } }],
    ["a URL that is not PostgreSQL", { storage: { postgres: "mysql://x@127.0.0.1/db" } }],
    [
      "a lease TTL below 1000 ms",
      { storage: { postgres: "postgres://x@127.0.0.1/db", rateLimitLeaseTtlMs: 999 } },
    ],
    [
      "a lease TTL that is not a whole number",
      { storage: { postgres: "postgres://x@127.0.0.1/db", rateLimitLeaseTtlMs: 1500.5 } },
    ],
    ["a lease TTL without a database", { storage: { rateLimitLeaseTtlMs: 5_000 } }],
  ])("%s is refused with INVALID_CONFIG", async (_label, options) => {
    await expect(replica(options, join(scratch, "bad"))).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  });

  test("a database nobody answers at is UPSTREAM_UNAVAILABLE, with its password masked", async () => {
    const url = `postgres://app:s3cret@127.0.0.1:${await freePort()}/db`;
    const error = await replica({ storage: { postgres: url } }, join(scratch, "down")).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
    expect(String((error as Error).message)).not.toContain("s3cret");
  });
});
