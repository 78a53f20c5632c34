/** The measurements of the broker benchmark; `bench/broker.bench.ts` turns them into a `BenchResult`. */
import { performance } from "node:perf_hooks";
import type { Broker } from "../../src/governance/broker/broker.js";
import type { InvokeOutcome } from "../../src/governance/broker/broker-types.js";
import { BENCH_SOURCE_ID, CACHED_TOOL, UNCACHED_TOOL } from "./bench-server.js";
import type { BrokerFixture } from "./broker-fixture.js";
import { type LatencySummary, measureBatch, measureInterleaved, summarizeLatencies } from "./latency.js";

const SESSION = "bench-session";
const CACHED_QUERY = "crispr off-target effects";

/** Calls the baseline and both brokers, counting invocations so that lost ledger rows can be detected. */
export class BrokerDriver {
  readonly fixture: BrokerFixture;
  /** Invocations made through the broker with the SQLite ledger. */
  sqliteInvocations = 0;
  /** Invocations made through the broker with the in-memory ledger. */
  memoryInvocations = 0;

  /** @param fixture the brokers and pool to drive */
  constructor(fixture: BrokerFixture) {
    this.fixture = fixture;
  }

  /** A direct SDK `callTool` of the uncached tool, through the same pool and client the broker uses. */
  direct(query: string): Promise<unknown> {
    return this.fixture.pool.callTool(BENCH_SOURCE_ID, UNCACHED_TOOL, { query });
  }

  /** `Broker.invoke` with the SQLite ledger and file CAS. */
  invoke(toolId: string, query: string): Promise<InvokeOutcome> {
    this.sqliteInvocations++;
    return invokeWith(this.fixture.broker, toolId, query);
  }

  /** `Broker.invoke` with in-memory stores. */
  invokeInMemory(toolId: string, query: string): Promise<InvokeOutcome> {
    this.memoryInvocations++;
    return invokeWith(this.fixture.memoryBroker, toolId, query);
  }

  /**
   * A call of the cached tool with the one repeated input.
   * @throws Error when it was not served from the cache (the measurement would be meaningless)
   */
  async cacheHit(): Promise<void> {
    const outcome = await this.invoke(CACHED_TOOL, CACHED_QUERY);
    if (!outcome.cacheHit) throw new Error("A repeated call of the cached tool missed the cache.");
  }

  /**
   * Makes the first call of the cached tool, which fills the cache.
   * @throws Error when that first call already was a hit
   */
  async primeCache(): Promise<void> {
    const outcome = await this.invoke(CACHED_TOOL, CACHED_QUERY);
    if (outcome.cacheHit) throw new Error("The first call of the cached tool was already a cache hit.");
  }
}

function invokeWith(broker: Broker, toolId: string, query: string): Promise<InvokeOutcome> {
  return broker.invoke({ sourceId: BENCH_SOURCE_ID, toolId, input: { query }, sessionId: SESSION });
}

/** Sequential latencies of every case, measured side by side. */
export interface LatencyResults {
  direct: LatencySummary;
  broker: LatencySummary;
  memoryBroker: LatencySummary;
  cacheHit: LatencySummary;
}

/**
 * Sequential latency of direct calls, broker calls (distinct inputs, caching off), broker calls with
 * in-memory stores, and cache hits, interleaved in blocks.
 * @param driver the calls
 * @param warmup untimed calls per case
 * @param iterations timed calls per case
 * @returns a latency summary per case
 */
export async function measureLatencies(
  driver: BrokerDriver,
  warmup: number,
  iterations: number,
): Promise<LatencyResults> {
  await driver.primeCache();
  const samples = await measureInterleaved(
    [
      { name: "direct", call: (i) => driver.direct(`direct query ${i}`) },
      // Distinct inputs: every call reaches the server and writes new CAS objects (no dedup).
      { name: "broker", call: (i) => driver.invoke(UNCACHED_TOOL, `broker query ${i}`) },
      { name: "memoryBroker", call: (i) => driver.invokeInMemory(UNCACHED_TOOL, `memory query ${i}`) },
      { name: "cacheHit", call: () => driver.cacheHit() },
    ],
    { warmup, iterations },
  );
  const summary = (name: string) => summarizeLatencies(samples.get(name) ?? []);
  return {
    direct: summary("direct"),
    broker: summary("broker"),
    memoryBroker: summary("memoryBroker"),
    cacheHit: summary("cacheHit"),
  };
}

/** Mean time per call in one phase. */
export interface PhaseShare {
  phase: string;
  msPerCall: number;
  /** How often the phase ran per call (e.g. 3 CAS writes). */
  timesPerCall: number;
}

/**
 * Where sequential broker calls spend their time: mean ms per call in each timed port (CAS, ledger,
 * MCP call) and the rest, which is the broker's own work (validation, hashing, envelope checks, limiter).
 * @param driver the calls
 * @param calls how many sequential calls to time
 * @param call one broker call, given its index
 * @returns the phases, the rest last, and the mean wall time per call
 */
export async function measureBreakdown(
  driver: BrokerDriver,
  calls: number,
  call: (index: number) => Promise<unknown>,
): Promise<{ phases: PhaseShare[]; msPerCall: number }> {
  const { timer } = driver.fixture;
  timer.start();
  const start = performance.now();
  for (let i = 0; i < calls; i++) await call(i);
  const msPerCall = (performance.now() - start) / calls;
  const phases = timer.stop().map((p) => ({
    phase: p.phase,
    msPerCall: p.totalMs / calls,
    timesPerCall: p.count / calls,
  }));
  const timed = phases.reduce((sum, p) => sum + p.msPerCall, 0);
  phases.push({ phase: "broker logic (rest)", msPerCall: msPerCall - timed, timesPerCall: 1 });
  return { phases, msPerCall };
}

/** Median wall times of concurrent batches. */
export interface ThroughputResults {
  directWallMs: number;
  brokerWallMs: number;
  /** Longest `queueWaitMs` any broker call reported. */
  maxQueueWaitMs: number;
  /** Most MCP calls the broker had in flight at once. */
  maxInFlight: number;
}

/**
 * Starts `count` direct calls at once, then `count` broker calls at once (distinct inputs, caching off,
 * one rate-limit group), `rounds` times alternately.
 * @param driver the calls
 * @param count calls per batch
 * @param rounds batches per side; the median is reported
 * @param maxConcurrent the group's cap, checked against the calls in flight
 * @returns median wall times, the longest queue wait and the peak of MCP calls in flight
 * @throws Error when more MCP calls ran at once than the group allows (the limiter was bypassed)
 */
export async function measureThroughput(
  driver: BrokerDriver,
  count: number,
  rounds: number,
  maxConcurrent: number,
): Promise<ThroughputResults> {
  const directWall: number[] = [];
  const brokerWall: number[] = [];
  let maxQueueWaitMs = 0;
  const gauge = driver.fixture.inFlight;
  gauge.max = 0;
  for (let round = 0; round < rounds; round++) {
    directWall.push((await measureBatch(count, (i) => driver.direct(`direct batch ${round}:${i}`))).wallMs);
    const batch = await measureBatch(count, async (i) => {
      const outcome = await driver.invoke(UNCACHED_TOOL, `broker batch ${round}:${i}`);
      maxQueueWaitMs = Math.max(maxQueueWaitMs, outcome.queueWaitMs);
    });
    brokerWall.push(batch.wallMs);
  }
  if (gauge.max > maxConcurrent) {
    throw new Error(`${gauge.max} MCP calls ran at once in a group capped at ${maxConcurrent}.`);
  }
  const median = (values: number[]) => summarizeLatencies(values).p50;
  return {
    directWallMs: median(directWall),
    brokerWallMs: median(brokerWall),
    maxQueueWaitMs,
    maxInFlight: gauge.max,
  };
}
