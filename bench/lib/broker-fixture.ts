/**
 * A broker with its production stores (SQLite ledger in WAL mode, file CAS) wired to the in-process
 * bench server, a second broker with in-memory stores for comparison, and the pool that the baseline
 * calls directly.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { FileContentStore, MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { LedgerWriter } from "../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { Broker } from "../../src/governance/broker/broker.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import { RateLimiter } from "../../src/governance/rate-limit/rate-limiter.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import { resolveDataDir } from "../../src/runtime/data-dir.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { BENCH_SOURCE_ID, benchManifest, createBenchServer } from "./bench-server.js";
import { PhaseTimer } from "./phase-timer.js";
import { type InFlightGauge, TimedContentStore, TimedLedger, timedPool } from "./timed-ports.js";

/** Options of `createBrokerFixture`. */
export interface BrokerFixtureOptions {
  /** Concurrency cap of the bench source's rate-limit group. @default 8 */
  maxConcurrentRequests?: number;
}

/** Everything the broker benchmark drives; `close()` removes the temp directory. */
export interface BrokerFixture {
  /** The broker under test: SQLite ledger and file CAS, each behind a timing decorator. */
  broker: Broker;
  /** The same broker setup with `MemoryLedger` and `MemoryContentStore`: governance logic without disk I/O. */
  memoryBroker: Broker;
  /** The pool (one SDK client per server) that both brokers call through; the baseline calls it directly. */
  pool: ToolServerPool;
  ledger: SqliteLedger;
  memoryLedger: MemoryLedger;
  limiter: RateLimiter;
  /** Records the time `broker` spends in CAS, ledger and MCP calls while started. */
  timer: PhaseTimer;
  /** MCP calls in flight from either broker (the limiter must keep `max` within the group's cap). */
  inFlight: InFlightGauge;
  /** Temp directory holding `ledger.sqlite` and `cas/`. */
  dir: string;
  close(): Promise<void>;
}

/**
 * Builds the registry, pool, live catalog, limiter, SQLite ledger and file CAS, and brokers over them.
 * @param options the group's concurrency cap
 * @returns the fixture; call `close()` when done
 * @throws Error when the catalog does not offer the bench source as ready (a broken setup, not a slow one)
 */
export async function createBrokerFixture(options: BrokerFixtureOptions = {}): Promise<BrokerFixture> {
  // The data directory sits where a deployment keeps it (SCIENCEGATE_HOME, default ./.sciencegate). The bench
  // reports that filesystem's file-create cost beside the overhead, because the CAS's three small files per
  // uncached call dominate it and this machine's disk varies by directory and over time.
  const base = resolveDataDir();
  await mkdir(base, { recursive: true });
  const dir = await mkdtemp(join(base, "bench-"));
  const registry = new SourceRegistry();
  registry.register(benchManifest(options.maxConcurrentRequests ?? 8));
  const pool = createInMemoryPool({ [BENCH_SOURCE_ID]: createBenchServer });
  const catalog = new SourceCatalog({ registry, pool });
  const snapshot = await catalog.refresh();
  const source = snapshot.sources.find((s) => s.id === BENCH_SOURCE_ID);
  if (source?.status !== "ready") {
    throw new Error(`Bench source is ${source?.status ?? "absent"}: ${source?.reason ?? "no reason"}`);
  }
  const timer = new PhaseTimer();
  const inFlight: InFlightGauge = { current: 0, max: 0 };
  const brokerPool = timedPool(pool, timer, inFlight);
  const ledger = await SqliteLedger.open(join(dir, "ledger.sqlite"));
  const memoryLedger = new MemoryLedger();
  const limiter = new RateLimiter({ groups: registry.rateLimitGroups() });
  const broker = new Broker({
    catalog,
    pool: brokerPool,
    ledgerWriter: new LedgerWriter(new TimedLedger(ledger, timer)),
    store: new TimedContentStore(new FileContentStore(join(dir, "cas")), timer),
    limiter,
  });
  const memoryBroker = new Broker({
    catalog,
    pool: brokerPool,
    ledgerWriter: new LedgerWriter(memoryLedger),
    store: new MemoryContentStore(),
    limiter,
  });
  return {
    broker,
    memoryBroker,
    pool,
    ledger,
    memoryLedger,
    limiter,
    timer,
    inFlight,
    dir,
    close: async () => {
      await pool.close();
      await ledger.close();
      await memoryLedger.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
