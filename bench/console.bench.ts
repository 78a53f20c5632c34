/**
 * Console page loads on a ledger of 100,000 rows (a month of calls, SQLite), side by side with the same
 * pages over 1,000 rows: each page fetched over HTTP from `serveConsole`, whole body read, the two
 * consoles interleaved so drift hits both alike. The ratio says how a page's cost grows with the ledger.
 * `BENCH_QUICK=1` runs 20,000 rows and fewer iterations.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConsoleServer, serveConsole } from "../src/console/index.js";
import { createGovernance, type Governance } from "../src/runtime/index.js";
import { type BenchResult, metricWithTarget, ratioOf } from "./lib/bench-result.js";
import { measureInterleaved, summarizeLatencies, type TimedCase } from "./lib/latency.js";
import { fillLedger } from "./lib/ledger-browse-rows.js";

const QUICK = process.env.BENCH_QUICK === "1";
const BIG = QUICK ? 20_000 : 100_000;
const SMALL = 1_000;
const WARMUP = 2;
const ITERATIONS = QUICK ? 6 : 15;
/** A page a person waits for: an upper bound, informational. */
const TARGET_MS = 500;

interface Side {
  governance: Governance;
  server: ConsoleServer;
  dir: string;
  /** The 100th page's cursor and a row id. */
  cursor: string;
  rowId: string;
}

async function open(rows: number): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-console-bench-"));
  const governance = await createGovernance({ config: { servers: [] }, storage: { dataDir: dir }, env: {} });
  await fillLedger(governance.ledgerWriter, rows);
  const page99 = await governance.ledger.query({ order: "desc", limit: Math.min(99 * 50, rows - 1) });
  const cursor = page99.at(-1)?.invocationId ?? "";
  const rowId = page99[Math.floor(page99.length / 2)]?.invocationId ?? "";
  const server = await serveConsole({ governance, port: 0 });
  return { governance, server, dir, cursor, rowId };
}

const PAGES: readonly [name: string, path: (side: Side) => string][] = [
  ["invocations, newest page", () => "/invocations"],
  ["invocations, by source", () => "/invocations?source=pubmed"],
  ["invocations, errors", () => "/invocations?status=error"],
  ["invocations, text (common)", () => "/invocations?q=deadline"],
  ["invocations, text (no match)", () => "/invocations?q=no%20such%20text"],
  ["invocations, 100th page (after)", (side) => `/invocations?after=${encodeURIComponent(side.cursor)}`],
  ["one invocation", (side) => `/invocations/${encodeURIComponent(side.rowId)}`],
  ["permissions", () => "/permissions"],
  ["sources", () => "/sources"],
  ["downloads", () => "/jobs"],
  ["papers", () => "/papers"],
];

async function load(side: Side, path: string): Promise<void> {
  const response = await fetch(`${side.server.url}${path}`);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body.slice(0, 300)}`);
}

export async function run(): Promise<BenchResult> {
  const started = performance.now();
  const big = await open(BIG);
  const small = await open(SMALL);
  const fillSeconds = (performance.now() - started) / 1000;
  try {
    const cases: TimedCase[] = PAGES.flatMap(([name, path]) => [
      { name: `${name} @${BIG}`, call: () => load(big, path(big)) },
      { name: `${name} @${SMALL}`, call: () => load(small, path(small)) },
    ]);
    const samples = await measureInterleaved(cases, { warmup: WARMUP, iterations: ITERATIONS, blockSize: 1 });
    const metrics = [];
    const ratios = [];
    for (const [name] of PAGES) {
      const ours = summarizeLatencies(samples.get(`${name} @${BIG}`) ?? []);
      const peer = summarizeLatencies(samples.get(`${name} @${SMALL}`) ?? []);
      metrics.push(
        metricWithTarget(`${name}: p50 at ${BIG.toLocaleString("en")} rows`, ours.p50, "ms", TARGET_MS),
      );
      metrics.push(
        metricWithTarget(`${name}: p90 at ${BIG.toLocaleString("en")} rows`, ours.p90, "ms", TARGET_MS),
      );
      ratios.push(
        ratioOf(
          `${name} p50: ${BIG.toLocaleString("en")} rows / ${SMALL.toLocaleString("en")} rows`,
          ours.p50,
          peer.p50,
          "ms",
        ),
      );
    }
    return {
      name: "console",
      description: `console page loads over HTTP (whole body) on a ${BIG.toLocaleString("en")}-row SQLite ledger, side by side with ${SMALL.toLocaleString("en")} rows`,
      parameters: { bigRows: BIG, smallRows: SMALL, warmup: WARMUP, iterations: ITERATIONS },
      metrics,
      ratios,
      notes: [
        `Filling both ledgers took ${fillSeconds.toFixed(1)} s.`,
        "Each /invocations load runs the page query, the count and the activity chart (its span and buckets) on the same filters.",
      ],
    };
  } finally {
    for (const side of [big, small]) {
      await side.server.close();
      await side.governance.close();
      await rm(side.dir, { recursive: true, force: true });
    }
  }
}
