/**
 * Broker overhead benchmark. Part one, side by side against the same stdio server program
 * (`@modelcontextprotocol/server-memory` `read_graph`): the MCP SDK client, `@langchain/mcp-adapters`
 * and `Broker.invoke` (SQLite ledger + file CAS) with its data directory in `/tmp` and under the working
 * folder; cache hits; 1,000 concurrent calls. Part two, on an in-process MCP server: where a call's
 * time goes (timed ports). `BENCH_QUICK=1` runs reduced iterations (to prove the bench works).
 */

import { tmpdir } from "node:os";
import { resolveDataDir } from "../src/runtime/data-dir.js";
import { RECORDS_PER_RESULT } from "./lib/bench-records.js";
import {
  type BenchMetric,
  type BenchResult,
  metricWithFloor,
  metricWithTarget,
  ratioOf,
} from "./lib/bench-result.js";
import { UNCACHED_TOOL } from "./lib/bench-server.js";
import { createBrokerFixture } from "./lib/broker-fixture.js";
import {
  BrokerDriver,
  measureBreakdown,
  measureLatencies,
  measureThroughput,
  type PhaseShare,
} from "./lib/broker-scenarios.js";
import { fileCreateCostMs } from "./lib/file-create-cost.js";
import { createMemoryServerFixture } from "./lib/memory-server-fixture.js";
import { objectWriteCosts } from "./lib/object-write-cost.js";
import { measureStdioLatencies, measureStdioThroughput } from "./lib/stdio-scenarios.js";

const QUICK = process.env.BENCH_QUICK === "1";
const WARMUP = QUICK ? 50 : 200;
const ITERATIONS = QUICK ? 200 : 2_000;
/** Sequential calls per client in the stdio comparison. */
const STDIO_ITERATIONS = QUICK ? 200 : 1_000;
const BREAKDOWN_CALLS = QUICK ? 100 : 500;
const CONCURRENT_CALLS = 1_000;
const MAX_CONCURRENT_REQUESTS = 8;
/** Batches per side; the median is reported, so one GC pause does not decide the ratio. */
const THROUGHPUT_ROUNDS = QUICK ? 1 : 3;
/** Object sizes whose write cost (file vs ledger row) is reported: the inline threshold's evidence. */
const OBJECT_SIZES = [1024, 16 * 1024, 64 * 1024, 128 * 1024, 256 * 1024];

/** Targets; printed next to the measurements, never enforced. */
const TARGET_OVERHEAD_P50_MS = 0.25;
const TARGET_OVERHEAD_P99_MS = 2;
const TARGET_CACHE_HIT_P50_MS = 0.1;
const TARGET_THROUGHPUT_RATIO = 0.5;

function breakdownMetrics(label: string, phases: readonly PhaseShare[]): BenchMetric[] {
  return phases.map((p) => ({
    name: `${label}: ${p.phase}${p.timesPerCall === 1 ? "" : ` (x${Number(p.timesPerCall.toFixed(2))})`}`,
    value: p.msPerCall,
    unit: "ms/call",
  }));
}

/**
 * Runs the broker benchmark: sequential latency (direct, broker, broker with in-memory stores, cache
 * hit; interleaved), a per-phase breakdown, concurrent throughput through one limiter group, and a
 * check that the ledger holds one row per invocation.
 * @returns metrics with targets, broker/direct ratios and notes
 * @throws Error when the setup is broken (catalog not ready, cache not hit, limiter bypassed, rows lost)
 */
export async function run(): Promise<BenchResult> {
  const stdio = await runStdio();
  const inProcess = await runInProcess();
  const costs = [
    ...objectWriteCosts(tmpdir(), OBJECT_SIZES, QUICK ? 50 : 200).map((c) => ({ ...c, where: "/tmp" })),
    ...objectWriteCosts(resolveDataDir(), OBJECT_SIZES, QUICK ? 50 : 200).map((c) => ({
      ...c,
      where: "work",
    })),
  ];
  return {
    ...inProcess,
    description:
      "Broker.invoke vs MCP SDK and @langchain/mcp-adapters on the same stdio server (server-memory read_graph); breakdown on an in-process server",
    parameters: { ...stdio.parameters, ...inProcess.parameters, quick: QUICK },
    metrics: [
      ...stdio.metrics,
      ...costs.flatMap((c) => [
        {
          name: `object ${c.bytes / 1024} KiB in ${c.where}: file create + rename p50`,
          value: c.fileMs,
          unit: "ms",
        },
        {
          name: `object ${c.bytes / 1024} KiB in ${c.where}: ledger row insert p50`,
          value: c.sqliteMs,
          unit: "ms",
        },
      ]),
      ...inProcess.metrics,
    ],
    ratios: [...stdio.ratios, ...inProcess.ratios],
    notes: [...stdio.notes, ...inProcess.notes],
  };
}

async function runStdio(): Promise<Pick<BenchResult, "parameters" | "metrics" | "ratios" | "notes">> {
  const fixture = await createMemoryServerFixture();
  try {
    const l = await measureStdioLatencies(fixture, WARMUP, STDIO_ITERATIONS);
    const t = await measureStdioThroughput(fixture, CONCURRENT_CALLS, THROUGHPUT_ROUNDS);
    const rows = (await fixture.tmp.ledger.summary()).calls + (await fixture.work.ledger.summary()).calls;
    const expected =
      1 +
      3 * (WARMUP + STDIO_ITERATIONS) +
      (WARMUP + STDIO_ITERATIONS) +
      CONCURRENT_CALLS * THROUGHPUT_ROUNDS;
    if (rows !== expected) throw new Error(`Ledger rows lost: ${rows} rows for ${expected} invocations.`);
    const rate = (wallMs: number) => (CONCURRENT_CALLS / wallMs) * 1000;
    const n = CONCURRENT_CALLS;
    return {
      parameters: { stdioIterations: STDIO_ITERATIONS, stdioWarmup: WARMUP },
      metrics: [
        { name: "stdio: SDK callTool p50", value: l.sdk.p50, unit: "ms" },
        { name: "stdio: SDK callTool p99", value: l.sdk.p99, unit: "ms" },
        { name: "stdio: mcp-adapters invoke p50", value: l.adapters.p50, unit: "ms" },
        { name: "stdio: mcp-adapters invoke p99", value: l.adapters.p99, unit: "ms" },
        { name: "stdio: broker (/tmp) p50", value: l.brokerTmp.p50, unit: "ms" },
        { name: "stdio: broker (/tmp) p99", value: l.brokerTmp.p99, unit: "ms" },
        { name: "stdio: broker (work) p50", value: l.brokerWork.p50, unit: "ms" },
        { name: "stdio: broker (work) p99", value: l.brokerWork.p99, unit: "ms" },
        metricWithTarget(
          "stdio: broker overhead p50 (/tmp)",
          l.brokerTmp.p50 - l.sdk.p50,
          "ms",
          TARGET_OVERHEAD_P50_MS,
        ),
        metricWithTarget(
          "stdio: broker overhead p50 (work)",
          l.brokerWork.p50 - l.sdk.p50,
          "ms",
          TARGET_OVERHEAD_P50_MS,
        ),
        metricWithTarget(
          "stdio: broker overhead p99 (/tmp)",
          l.brokerTmp.p99 - l.sdk.p99,
          "ms",
          TARGET_OVERHEAD_P99_MS,
        ),
        metricWithTarget(
          "stdio: broker overhead p99 (work)",
          l.brokerWork.p99 - l.sdk.p99,
          "ms",
          TARGET_OVERHEAD_P99_MS,
        ),
        metricWithTarget("stdio: cache hit p50", l.cacheHit.p50, "ms", TARGET_CACHE_HIT_P50_MS),
        { name: "stdio: cache hit p99", value: l.cacheHit.p99, unit: "ms" },
        { name: `stdio: SDK ${n} concurrent`, value: rate(t.directWallMs), unit: "calls/s" },
        {
          name: `stdio: broker ${n} concurrent (group without limits)`,
          value: rate(t.brokerWallMs),
          unit: "calls/s",
        },
        metricWithFloor(
          `stdio: ${n} concurrent, broker / SDK calls/s`,
          rate(t.brokerWallMs) / rate(t.directWallMs),
          "x",
          TARGET_THROUGHPUT_RATIO,
        ),
      ],
      ratios: [
        ratioOf("stdio p50: broker (/tmp) / SDK", l.brokerTmp.p50, l.sdk.p50, "ms"),
        ratioOf("stdio p50: broker (work) / SDK", l.brokerWork.p50, l.sdk.p50, "ms"),
        ratioOf("stdio p50: broker (/tmp) / mcp-adapters", l.brokerTmp.p50, l.adapters.p50, "ms"),
        ratioOf("stdio p99: broker (/tmp) / SDK", l.brokerTmp.p99, l.sdk.p99, "ms"),
        ratioOf("stdio p50: mcp-adapters / SDK", l.adapters.p50, l.sdk.p50, "ms"),
        ratioOf(`stdio ${n} concurrent: broker / SDK`, rate(t.brokerWallMs), rate(t.directWallMs), "calls/s"),
      ],
      notes: [
        `Stdio: each client has its own child of @modelcontextprotocol/server-memory; ${STDIO_ITERATIONS} sequential read_graph calls per client after ${WARMUP} warm-up calls, interleaved in blocks of 250; overhead = broker percentile - SDK percentile.`,
        `Stdio throughput: median of ${THROUGHPUT_ROUNDS} batches of ${n} calls started at once, SDK client vs broker (data in /tmp, rate-limit group without limits).`,
        "Object write cost: median of fresh random objects per size, file create + rename vs one ledger-table insert in its own WAL transaction; objects up to 64 KiB live in the ledger.",
      ],
    };
  } finally {
    await fixture.close();
  }
}

async function runInProcess(): Promise<BenchResult> {
  const fixture = await createBrokerFixture({ maxConcurrentRequests: MAX_CONCURRENT_REQUESTS });
  const driver = new BrokerDriver(fixture);
  try {
    const fileCost = fileCreateCostMs(fixture.dir);
    const latency = await measureLatencies(driver, WARMUP, ITERATIONS);
    const uncached = await measureBreakdown(driver, BREAKDOWN_CALLS, (i) =>
      driver.invoke(UNCACHED_TOOL, `breakdown query ${i}`),
    );
    const hit = await measureBreakdown(driver, BREAKDOWN_CALLS, () => driver.cacheHit());
    const throughput = await measureThroughput(
      driver,
      CONCURRENT_CALLS,
      THROUGHPUT_ROUNDS,
      MAX_CONCURRENT_REQUESTS,
    );
    const rows = (await fixture.ledger.summary()).calls;
    const memoryRows = (await fixture.memoryLedger.summary()).calls;
    if (rows !== driver.sqliteInvocations || memoryRows !== driver.memoryInvocations) {
      throw new Error(
        `Ledger rows lost: SQLite ${rows} for ${driver.sqliteInvocations} invocations, ` +
          `memory ${memoryRows} for ${driver.memoryInvocations}.`,
      );
    }

    const { direct: d, broker: b, memoryBroker: m, cacheHit: c } = latency;
    const perSecond = (wallMs: number) => (CONCURRENT_CALLS / wallMs) * 1000;
    const directRate = perSecond(throughput.directWallMs);
    const brokerRate = perSecond(throughput.brokerWallMs);
    const n = CONCURRENT_CALLS;
    return {
      name: "broker",
      description:
        "Broker.invoke (SQLite WAL ledger + file CAS) vs direct SDK callTool, same in-memory MCP server",
      parameters: {
        warmup: WARMUP,
        iterations: ITERATIONS,
        breakdownCalls: BREAKDOWN_CALLS,
        concurrentCalls: CONCURRENT_CALLS,
        maxConcurrentRequests: MAX_CONCURRENT_REQUESTS,
        throughputRounds: THROUGHPUT_ROUNDS,
        recordsPerResult: RECORDS_PER_RESULT,
      },
      metrics: [
        { name: "direct callTool p50", value: d.p50, unit: "ms" },
        { name: "direct callTool p99", value: d.p99, unit: "ms" },
        { name: "broker invoke p50 (cache off)", value: b.p50, unit: "ms" },
        { name: "broker invoke p99 (cache off)", value: b.p99, unit: "ms" },
        { name: "broker overhead p50", value: b.p50 - d.p50, unit: "ms" },
        { name: "broker overhead p99", value: b.p99 - d.p99, unit: "ms" },
        { name: "cache hit p50", value: c.p50, unit: "ms" },
        { name: "cache hit p99", value: c.p99, unit: "ms" },
        { name: "in-memory-stores broker overhead p50", value: m.p50 - d.p50, unit: "ms" },
        { name: "in-memory-stores broker overhead p99", value: m.p99 - d.p99, unit: "ms" },
        { name: "data dir: one file create + rename p50", value: fileCost, unit: "ms" },
        ...breakdownMetrics("cache off", uncached.phases),
        ...breakdownMetrics("cache hit", hit.phases),
        { name: `direct ${n} concurrent: wall`, value: throughput.directWallMs, unit: "ms" },
        { name: `direct ${n} concurrent`, value: directRate, unit: "calls/s" },
        { name: `broker ${n} concurrent: wall`, value: throughput.brokerWallMs, unit: "ms" },
        { name: `broker ${n} concurrent`, value: brokerRate, unit: "calls/s" },
        { name: "broker peak MCP calls in flight", value: throughput.maxInFlight, unit: "calls" },
        { name: "broker max queue wait", value: throughput.maxQueueWaitMs, unit: "ms" },
        { name: "ledger rows (= invocations)", value: rows, unit: "rows" },
      ],
      ratios: [
        ratioOf("latency p50: broker / direct", b.p50, d.p50, "ms"),
        ratioOf("latency p99: broker / direct", b.p99, d.p99, "ms"),
        ratioOf("latency p50: in-memory-stores broker / direct", m.p50, d.p50, "ms"),
        ratioOf("cache hit p50 / direct p50", c.p50, d.p50, "ms"),
        ratioOf(`throughput ${n} concurrent: broker / direct`, brokerRate, directRate, "calls/s"),
      ],
      notes: [
        `Latency: ${WARMUP} warm-up calls per case, then ${ITERATIONS} sequential calls per case in alternating ` +
          "blocks of 250; overhead = broker percentile - direct percentile.",
        `Breakdown: mean over ${BREAKDOWN_CALLS} sequential calls (and the flush of their rows), timed at the broker's injected ports; ` +
          "a row is written after its call returns, so 'ledger append' (hand-over to commit) overlaps the next calls; " +
          "'broker logic (rest)' is wall time minus port time: validation, hashing, envelope checks, limiter and the SDK wrapper, less that overlap.",
        `Throughput: median of ${THROUGHPUT_ROUNDS} batches of ${n} calls started at once; the broker's group ` +
          `admits ${MAX_CONCURRENT_REQUESTS} at a time, direct calls are unlimited.`,
      ],
    };
  } finally {
    await fixture.close();
  }
}
