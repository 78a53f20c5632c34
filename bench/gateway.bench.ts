/**
 * Gateway benchmark: what the governed MCP gateway adds to a tool call. An MCP SDK `Client` calls PubMed
 * `search` on the bundled sources server directly, and the same client calls the same tool through the
 * gateway that reaches that same server; side by side over stdio processes (`sciencegate serve sources`
 * vs `sciencegate serve gateway`) and in process over `InMemoryTransport`, which separates the process
 * hop from the governance. Sequential latency (uncached: a distinct query each call; cached: the
 * gateway's result cache answers, while the direct server has no cache and always asks the provider),
 * then calls/s with N calls in flight. `BENCH_QUICK=1` runs reduced iterations.
 */
import { type BenchMetric, type BenchRatio, type BenchResult, ratioOf } from "./lib/bench-result.js";
import {
  BENCH_SOURCE,
  type BenchClient,
  createGatewayFixture,
  type GatewayFixture,
  RECORDS_PER_CALL,
} from "./lib/gateway-fixture.js";
import {
  type LatencySummary,
  measureClosedLoop,
  measureInterleaved,
  summarizeLatencies,
} from "./lib/latency.js";

const QUICK = process.env.BENCH_QUICK === "1";
const WARMUP = QUICK ? 30 : 200;
const ITERATIONS = QUICK ? 150 : 1_000;
const BLOCK_SIZE = QUICK ? 50 : 250;
/** Calls in flight at once in the throughput runs. */
const CONCURRENCY = 16;
/** Calls per throughput run. */
const CONCURRENT_CALLS = QUICK ? 200 : 500;
/** Throughput runs per case, alternating; the median calls/s is reported. */
const THROUGHPUT_ROUNDS = QUICK ? 1 : 3;

type Pair = "stdio" | "inProcess";
const PAIRS: readonly Pair[] = ["stdio", "inProcess"];
const LABEL: Record<Pair, string> = { stdio: "stdio", inProcess: "in process" };
/** The query of the cached case of each pair's gateway (the direct peers never send it). */
const CACHED_QUERY: Record<Pair, string> = { stdio: "bench cached stdio", inProcess: "bench cached memory" };

/** The three cases of a pair. */
type Case = "direct" | "gateway" | "cached";
const CASES: readonly Case[] = ["direct", "gateway", "cached"];

function caller(fixture: GatewayFixture, pair: Pair, c: Case): (index: number) => Promise<unknown> {
  const clients = fixture[pair];
  const client: BenchClient = c === "direct" ? clients.direct : clients.gateway;
  return c === "cached"
    ? () => client.call(CACHED_QUERY[pair])
    : (index) => client.call(`bench query ${pair} ${c} ${index}`);
}

/** Per pair and case: sequential latencies, calls/s (median of the rounds) and latencies under load. */
type Measured = Record<
  Pair,
  Record<Case, { sequential: LatencySummary; rate: number; loaded: LatencySummary }>
>;

async function measure(fixture: GatewayFixture): Promise<Measured> {
  const cases = PAIRS.flatMap((pair) =>
    CASES.map((c) => ({ name: `${pair} ${c}`, call: caller(fixture, pair, c) })),
  );
  const sequential = await measureInterleaved(cases, {
    warmup: WARMUP,
    iterations: ITERATIONS,
    blockSize: BLOCK_SIZE,
  });
  const rates = new Map<string, number[]>();
  const loaded = new Map<string, number[]>();
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    for (const { name, call } of cases) {
      // Indexes past the sequential ones, so no uncached query repeats.
      const offset = (WARMUP + ITERATIONS) * cases.length + round * CONCURRENT_CALLS;
      const run = await measureClosedLoop(CONCURRENT_CALLS, CONCURRENCY, (i) => call(offset + i));
      rates.set(name, [...(rates.get(name) ?? []), run.callsPerSecond]);
      loaded.set(name, [...(loaded.get(name) ?? []), ...run.latencies]);
    }
  }
  const result = {} as Measured;
  for (const pair of PAIRS) {
    result[pair] = {} as Measured[Pair];
    for (const c of CASES) {
      const name = `${pair} ${c}`;
      result[pair][c] = {
        sequential: summarizeLatencies(sequential.get(name) ?? []),
        rate: summarizeLatencies(rates.get(name) ?? []).p50,
        loaded: summarizeLatencies(loaded.get(name) ?? []),
      };
    }
  }
  return result;
}

/** Gateway calls and cache hits each gateway must have recorded, given the priming call. */
function expectedRows(): { calls: number; cacheHits: number } {
  const perCase = WARMUP + ITERATIONS + CONCURRENT_CALLS * THROUGHPUT_ROUNDS;
  return { calls: 2 * perCase + 1, cacheHits: perCase };
}

/**
 * Checks that the cached calls never reached the provider and that each gateway wrote one ledger row
 * per call, with the expected cache hits.
 * @throws Error when a check fails (the numbers would not mean what they say)
 */
async function verify(fixture: GatewayFixture): Promise<{ stdioRows: number; inProcessRows: number }> {
  for (const pair of PAIRS) {
    const asked = fixture.provider.requests.filter(
      (r) => r.path.endsWith("/esearch.fcgi") && r.query.term === CACHED_QUERY[pair],
    ).length;
    if (asked !== 1)
      throw new Error(`The ${pair} gateway asked the provider ${asked} times for its cached query.`);
  }
  const expected = expectedRows();
  const ledgers = { inProcess: await fixture.inProcessLedger(), stdio: await fixture.closeStdioGateway() };
  for (const pair of PAIRS) {
    const { calls, ok, cacheHits } = ledgers[pair];
    if (calls !== expected.calls || ok !== calls || cacheHits !== expected.cacheHits) {
      throw new Error(
        `The ${pair} gateway's ledger has ${calls} rows (${ok} ok, ${cacheHits} cache hits); ` +
          `expected ${expected.calls} ok rows with ${expected.cacheHits} cache hits.`,
      );
    }
  }
  return { stdioRows: ledgers.stdio.calls, inProcessRows: ledgers.inProcess.calls };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function pairRows(pair: Pair, m: Measured[Pair]): { metrics: BenchMetric[]; ratios: BenchRatio[] } {
  const label = LABEL[pair];
  const { direct: d, gateway: g, cached: c } = m;
  const n = CONCURRENCY;
  return {
    metrics: [
      { name: `${label}: direct p50`, value: d.sequential.p50, unit: "ms" },
      { name: `${label}: direct p99`, value: d.sequential.p99, unit: "ms" },
      { name: `${label}: gateway uncached p50`, value: g.sequential.p50, unit: "ms" },
      { name: `${label}: gateway uncached p99`, value: g.sequential.p99, unit: "ms" },
      { name: `${label}: gateway cached p50`, value: c.sequential.p50, unit: "ms" },
      { name: `${label}: gateway cached p99`, value: c.sequential.p99, unit: "ms" },
      {
        name: `${label}: added by the gateway, uncached p50`,
        value: g.sequential.p50 - d.sequential.p50,
        unit: "ms",
      },
      {
        name: `${label}: added by the gateway, uncached p99`,
        value: g.sequential.p99 - d.sequential.p99,
        unit: "ms",
      },
      {
        name: `${label}: gateway cached - direct p50`,
        value: c.sequential.p50 - d.sequential.p50,
        unit: "ms",
      },
      { name: `${label}: direct, ${n} in flight`, value: d.rate, unit: "calls/s" },
      { name: `${label}: gateway uncached, ${n} in flight`, value: g.rate, unit: "calls/s" },
      { name: `${label}: gateway cached, ${n} in flight`, value: c.rate, unit: "calls/s" },
      { name: `${label}: direct, ${n} in flight, p50`, value: d.loaded.p50, unit: "ms" },
      { name: `${label}: direct, ${n} in flight, p99`, value: d.loaded.p99, unit: "ms" },
      { name: `${label}: gateway uncached, ${n} in flight, p50`, value: g.loaded.p50, unit: "ms" },
      { name: `${label}: gateway uncached, ${n} in flight, p99`, value: g.loaded.p99, unit: "ms" },
      { name: `${label}: gateway cached, ${n} in flight, p50`, value: c.loaded.p50, unit: "ms" },
      { name: `${label}: gateway cached, ${n} in flight, p99`, value: c.loaded.p99, unit: "ms" },
    ],
    ratios: [
      ratioOf(`${label} p50: gateway uncached / direct`, g.sequential.p50, d.sequential.p50, "ms"),
      ratioOf(`${label} p99: gateway uncached / direct`, g.sequential.p99, d.sequential.p99, "ms"),
      ratioOf(`${label} p50: gateway cached / direct (no cache)`, c.sequential.p50, d.sequential.p50, "ms"),
      ratioOf(`${label} ${n} in flight: gateway uncached / direct`, g.rate, d.rate, "calls/s"),
      ratioOf(`${label} ${n} in flight: gateway cached / direct (no cache)`, c.rate, d.rate, "calls/s"),
    ],
  };
}

/**
 * Runs the gateway benchmark.
 * @returns latencies, calls/s, gateway/direct ratios and notes
 * @throws Error when a call fails, a cached call reaches the provider, or a ledger row is missing
 */
export async function run(): Promise<BenchResult> {
  const fixture = await createGatewayFixture();
  try {
    // The first call of each cached query fills the gateway's cache (one row, not a hit).
    const primed = await fixture.inProcess.gateway.call(CACHED_QUERY.inProcess);
    await fixture.stdio.gateway.call(CACHED_QUERY.stdio);
    const sizes = {
      direct: jsonBytes(await fixture.inProcess.direct.call("bench size")),
      gateway: jsonBytes(primed),
    };
    const measured = await measure(fixture);
    const rows = await verify(fixture);
    const stdio = pairRows("stdio", measured.stdio);
    const inProcess = pairRows("inProcess", measured.inProcess);
    const addedBy = (pair: Pair) =>
      measured[pair].gateway.sequential.p50 - measured[pair].direct.sequential.p50;
    return {
      name: "gateway",
      description:
        "An MCP client calling PubMed search on the bundled sources server directly vs through sciencegate serve gateway (stdio) and createGatewayServer (in process)",
      parameters: {
        warmup: WARMUP,
        iterations: ITERATIONS,
        blockSize: BLOCK_SIZE,
        concurrency: CONCURRENCY,
        concurrentCalls: CONCURRENT_CALLS,
        throughputRounds: THROUGHPUT_ROUNDS,
        recordsPerCall: RECORDS_PER_CALL,
        quick: QUICK,
      },
      metrics: [
        ...stdio.metrics,
        ...inProcess.metrics,
        {
          name: "stdio hop and process: stdio added - in-process added, p50",
          value: addedBy("stdio") - addedBy("inProcess"),
          unit: "ms",
        },
        { name: "response size: direct (CallToolResult JSON)", value: sizes.direct, unit: "bytes" },
        { name: "response size: gateway (CallToolResult JSON)", value: sizes.gateway, unit: "bytes" },
        { name: "ledger rows: stdio gateway (= its calls)", value: rows.stdioRows, unit: "rows" },
        { name: "ledger rows: in-process gateway (= its calls)", value: rows.inProcessRows, unit: "rows" },
      ],
      ratios: [...stdio.ratios, ...inProcess.ratios],
      notes: [
        `Source: PubMed search (esearch + efetch, ${RECORDS_PER_CALL} records) against a loopback fake provider in the bench process; the gateway's manifest is PubMed's without its rate limits (source '${BENCH_SOURCE}'), data (SQLite ledger, file CAS) in the OS temp folder, permissions enforced (a read-only public tool is allowed).`,
        "Stdio: the direct client runs `sciencegate serve sources --only pubmed`; the gateway client runs `sciencegate serve gateway --eager --config science.toml --manifests DIR`, the project's one provider being that same command (a science.toml project leaves the built-in manifests out, so the rate-limit-free `pubmed` manifest can take their place), so its calls cross two process hops; all from source through tsx.",
        `Sequential: ${WARMUP} warm-up calls per case, then ${ITERATIONS} per case, the six cases alternating in blocks of ${BLOCK_SIZE}; uncached calls send a distinct query each; added = gateway percentile - direct percentile.`,
        "Cached: the gateway's result cache answers (checked: the provider saw each cached query once, and the ledgers count the hits); the direct server has no cache, so its baseline always asks the provider.",
        `Throughput: a closed loop of ${CONCURRENCY} calls in flight, ${CONCURRENT_CALLS} calls per run, ${THROUGHPUT_ROUNDS} run(s) per case alternating, median calls/s; latencies under load pool every run.`,
      ],
    };
  } finally {
    await fixture.close();
  }
}
