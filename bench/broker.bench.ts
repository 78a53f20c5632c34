/**
 * Broker overhead benchmark (issue 3): `Broker.invoke` with the SQLite ledger and file CAS on,
 * against a direct SDK `callTool` on the same in-process MCP server and connection, in one run.
 */

import { RECORDS_PER_RESULT } from "./lib/bench-records.js";
import { type BenchMetric, type BenchResult, metricWithTarget, ratioOf } from "./lib/bench-result.js";
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

const WARMUP = 200;
const ITERATIONS = 2_000;
const BREAKDOWN_CALLS = 500;
const CONCURRENT_CALLS = 1_000;
const MAX_CONCURRENT_REQUESTS = 8;
/** Batches per side; the median is reported, so one GC pause does not decide the ratio. */
const THROUGHPUT_ROUNDS = 3;

/** Targets of issue 3; printed next to the measurements, never enforced. */
const TARGET_OVERHEAD_P50_MS = 1;
const TARGET_CACHE_HIT_P50_MS = 0.3;

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
        metricWithTarget("broker overhead p50", b.p50 - d.p50, "ms", TARGET_OVERHEAD_P50_MS),
        { name: "broker overhead p99", value: b.p99 - d.p99, unit: "ms" },
        metricWithTarget("cache hit p50", c.p50, "ms", TARGET_CACHE_HIT_P50_MS),
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
        `Breakdown: mean over ${BREAKDOWN_CALLS} sequential calls, timed at the broker's injected ports; ` +
          "'broker logic (rest)' is validation, hashing, envelope checks, limiter and the SDK wrapper.",
        `Throughput: median of ${THROUGHPUT_ROUNDS} batches of ${n} calls started at once; the broker's group ` +
          `admits ${MAX_CONCURRENT_REQUESTS} at a time, direct calls are unlimited.`,
      ],
    };
  } finally {
    await fixture.close();
  }
}
