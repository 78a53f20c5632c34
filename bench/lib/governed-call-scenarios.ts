/**
 * A governed call end to end on both storage set-ups: the storage benchmark's second part. Two
 * runtimes from `createGovernance` over the same in-process bench server: one with the default SQLite
 * files and in-process `RateLimiter`, one with `storage.postgres` (PostgreSQL ledger, grants, jobs and
 * `PostgresRateLimiter`). The bench source's group has a concurrency cap, so every uncached call takes
 * and releases a lease.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PostgresDatabase } from "../../src/core/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import {
  BENCH_SOURCE_ID,
  benchManifest,
  CACHED_TOOL,
  createBenchServer,
  UNCACHED_TOOL,
} from "./bench-server.js";
import { type LatencySummary, measureInterleaved, summarizeLatencies, type TimedCase } from "./latency.js";

const SESSION = "bench-session";
const CACHED_QUERY = "crispr off-target effects";

/** The two runtimes; `close()` closes them, their pools and removes their data directories. */
export interface GovernancePair {
  sqlite: Governance;
  postgres: Governance;
  /** The bench group's concurrency cap in both. */
  maxConcurrentRequests: number;
  close(): Promise<void>;
}

/**
 * Builds both runtimes: data directories and the bench manifest in a temp folder.
 * @param postgresUrl an empty database for `storage.postgres`
 * @param maxConcurrentRequests the bench group's cap
 * @returns the pair; call `close()` when done
 */
export async function createGovernancePair(
  postgresUrl: string,
  maxConcurrentRequests: number,
): Promise<GovernancePair> {
  const folder = await mkdtemp(join(tmpdir(), "sciencegate-bench-storage-"));
  const manifests = join(folder, "manifests");
  await mkdir(manifests);
  await writeFile(join(manifests, "bench.json"), JSON.stringify(benchManifest(maxConcurrentRequests)));
  const sqlitePool = createInMemoryPool({ [BENCH_SOURCE_ID]: createBenchServer });
  const postgresPool = createInMemoryPool({ [BENCH_SOURCE_ID]: createBenchServer });
  const pools = [sqlitePool, postgresPool];
  // An empty env: a SCIENCEGATE_DATABASE_URL in the shell must not move the SQLite runtime to PostgreSQL.
  const common = { config: { servers: [] }, manifests: { builtin: false, dirs: [manifests] }, env: {} };
  const runtimes: Governance[] = [];
  const close = async () => {
    await Promise.allSettled(runtimes.map((g) => g.close()));
    await Promise.allSettled(pools.map((p) => p.close()));
    await rm(folder, { recursive: true, force: true });
  };
  try {
    const sqlite = await createGovernance({
      ...common,
      mcp: { pool: sqlitePool },
      storage: { dataDir: join(folder, "sqlite") },
    });
    runtimes.push(sqlite);
    const postgres = await createGovernance({
      ...common,
      mcp: { pool: postgresPool },
      storage: { postgres: postgresUrl, dataDir: join(folder, "postgres") },
    });
    runtimes.push(postgres);
    for (const g of runtimes) {
      const cap = g.rateLimits.get(BENCH_SOURCE_ID)?.maxConcurrentRequests;
      if (cap !== maxConcurrentRequests)
        throw new Error(`The bench group's cap is ${cap}, not ${maxConcurrentRequests}.`);
    }
    return { sqlite, postgres, maxConcurrentRequests, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Latencies of one case: `invoke`, which returns once the call's row is committed. */
export type GovernedLatency = LatencySummary;

/** What `measureGovernedCalls` measured. */
export interface GovernedCallResults {
  uncached: { sqlite: GovernedLatency; postgres: GovernedLatency };
  cacheHit: { sqlite: GovernedLatency; postgres: GovernedLatency };
  /** Invocations per runtime (= its ledger rows). */
  invocations: number;
}

/**
 * Sequential governed calls, uncached (distinct queries) and cache hits, on both runtimes,
 * interleaved in blocks; `invoke` returns once the call's row is committed.
 * @param pair the runtimes
 * @param database the PostgreSQL runtime's database, to count the leases its limiter granted
 * @param warmup untimed calls per case
 * @param iterations timed calls per case
 * @returns latencies per case and the invocation count
 * @throws Error when a cache hit missed, rows were lost, or uncached calls took no PostgreSQL lease
 */
export async function measureGovernedCalls(
  pair: GovernancePair,
  database: PostgresDatabase,
  warmup: number,
  iterations: number,
): Promise<GovernedCallResults> {
  const timed = (
    name: string,
    g: Governance,
    toolId: string,
    query: (i: number) => string,
    expectHit: boolean,
  ): TimedCase => ({
    name,
    call: async (i) => {
      const request = { sourceId: BENCH_SOURCE_ID, toolId, input: { query: query(i) }, sessionId: SESSION };
      const outcome = await g.broker.invoke(request);
      if (outcome.cacheHit !== expectHit) throw new Error(`${name}: cacheHit was ${outcome.cacheHit}.`);
    },
  });
  const cached = () => CACHED_QUERY;
  // The first call of the cached tool fills the cache (and is no hit).
  for (const side of ["sqlite", "postgres"] as const) {
    await timed(`${side} prime`, pair[side], CACHED_TOOL, cached, false).call(0);
  }
  // Distinct inputs: every uncached call reaches the server and writes new objects.
  const distinct = (i: number) => `governed query ${i}`;
  const samples = await measureInterleaved(
    [
      timed("sqlite uncached", pair.sqlite, UNCACHED_TOOL, distinct, false),
      timed("postgres uncached", pair.postgres, UNCACHED_TOOL, distinct, false),
      timed("sqlite hit", pair.sqlite, CACHED_TOOL, cached, true),
      timed("postgres hit", pair.postgres, CACHED_TOOL, cached, true),
    ],
    { warmup, iterations },
  );

  const invocations = 1 + 2 * (warmup + iterations);
  for (const side of ["sqlite", "postgres"] as const) {
    const held = (await pair[side].ledger.summary()).calls;
    if (held !== invocations)
      throw new Error(`Ledger rows lost: ${side} holds ${held} for ${invocations} calls.`);
  }
  const [leases] = await database.query<{ n: string }>(
    "SELECT last_value::text AS n FROM sciencegate_rate_limit_leases_id_seq",
  );
  // Calls that reached the server, each with a lease: the uncached ones and the cached tool's first call.
  const admitted = warmup + iterations + 1;
  if (Number(leases?.n ?? 0) < admitted) {
    throw new Error(
      `PostgresRateLimiter granted ${leases?.n} leases for ${admitted} calls that reached the server.`,
    );
  }
  const summary = (name: string): GovernedLatency => summarizeLatencies(samples.get(name) ?? []);
  return {
    uncached: { sqlite: summary("sqlite uncached"), postgres: summary("postgres uncached") },
    cacheHit: { sqlite: summary("sqlite hit"), postgres: summary("postgres hit") },
    invocations,
  };
}
