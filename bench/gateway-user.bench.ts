/**
 * What the governed MCP gateway adds where users run it: `sciencegate serve gateway --eager` (the built
 * CLI) over stdio and over Streamable HTTP on loopback, an MCP SDK client calling (a) a trivial
 * read-only tool on a stdio server and (b) PubMed search on the bundled sources server (loopback fake
 * provider), side by side with the same SDK client calling its own child of the same server directly.
 * Sequential calls in alternating blocks (`lib/blocks.ts`), p50/p99 wall and CPU per call (this
 * process's main thread, and every process the route drives: the server, or the gateway and its
 * children), then calls/s with 16 in flight. Targets printed with their verdicts, never enforced.
 * `BENCH_QUICK=1` runs reduced iterations.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type BenchMetric,
  type BenchRatio,
  type BenchResult,
  metricWithFloor,
  metricWithTarget,
  ratioOf,
} from "./lib/bench-result.js";
import { type BlockCase, type CaseSummary, measureBlocks, measureLoad } from "./lib/blocks.js";
import {
  createGatewayUserFixture,
  type GatewayUserFixture,
  type Route,
  rssBytes,
} from "./lib/gateway-user-fixture.js";
import type { UserServer } from "./lib/user-servers.js";

const QUICK = process.env.BENCH_QUICK === "1";
const WARMUP = QUICK ? 50 : 200;
const BLOCK_SIZE = QUICK ? 100 : 500;
const BLOCKS = QUICK ? 1 : 3;
const IN_FLIGHT = 16;
const LOAD_CALLS = QUICK ? 320 : 1_600;
const LOAD_ROUNDS = QUICK ? 1 : 3;

/** The targets; printed with PASS/MISS, never enforced. */
const TARGET = { addedP50Ms: 0.5, trivialRate: 0.5, sourcesRate: 0.9 };

type Via = "direct" | "gateway stdio" | "gateway HTTP";
const VIAS: readonly Via[] = ["direct", "gateway stdio", "gateway HTTP"];

function route(f: GatewayUserFixture, via: Via, server: "a" | "b"): Route {
  if (via === "direct") return server === "a" ? f.direct.trivial : f.direct.sources;
  return via === "gateway stdio" ? f.gatewayStdio : f.gatewayHttp;
}

function callCase(name: string, r: Route, server: UserServer, toolName: string): BlockCase {
  return {
    name,
    call: async (index) => {
      const args = server.args(index);
      const result = (await r.client.callTool({ name: toolName, arguments: args })) as CallToolResult;
      if (toolName === server.mcpToolName || server.mcpToolName !== "lookup") return server.check(result);
      // The gateway's answer: the invocation id on a line of its own, then the server's text.
      const [first] = result.content;
      if (result.isError || first?.type !== "text" || !first.text.includes(`{"id":"${String(args.id)}"`))
        throw new Error(`${toolName} answered ${JSON.stringify(result).slice(0, 300)}`);
    },
    childPids: r.pids,
  };
}

function cases(f: GatewayUserFixture): BlockCase[] {
  return (["a", "b"] as const).flatMap((s) => {
    const server = s === "a" ? f.trivial : f.sources;
    return VIAS.map((via) =>
      callCase(
        `${s}: ${via}`,
        route(f, via, s),
        server,
        via === "direct" ? server.mcpToolName : server.modelName,
      ),
    );
  });
}

function caseMetrics(s: CaseSummary): BenchMetric[] {
  return [
    { name: `${s.name}: p50`, value: s.p50, unit: "ms" },
    { name: `${s.name}: p99`, value: s.p99, unit: "ms" },
    { name: `${s.name}: CPU/call, client main thread`, value: s.cpuMainMs, unit: "ms" },
    { name: `${s.name}: CPU/call, server processes`, value: s.cpuChildMs, unit: "ms" },
    { name: `${s.name}: CPU/call, client + servers`, value: s.cpuProcessMs + s.cpuChildMs, unit: "ms" },
  ];
}

/**
 * Runs the user-path gateway benchmark.
 * @returns latencies, CPU, calls/s in flight, memory, the targets with their verdicts
 * @throws Error when a call fails or answers other than the tool's normal answer
 */
export async function run(): Promise<BenchResult> {
  const f = await createGatewayUserFixture();
  try {
    const list = cases(f);
    const summaries = await measureBlocks(list, { warmup: WARMUP, blockSize: BLOCK_SIZE, blocks: BLOCKS });
    const load = await measureLoad(list, { total: LOAD_CALLS, concurrency: IN_FLIGHT, rounds: LOAD_ROUNDS });
    const by = (name: string) => summaries.find((s) => s.name === name) as CaseSummary;
    const rate = (name: string) => load.find((l) => l.name === name)?.callsPerSecond ?? Number.NaN;
    const rss = (r: Route) => r.pids().reduce((sum, pid) => sum + rssBytes(pid), 0) / 2 ** 20;

    const targets: BenchMetric[] = [];
    const ratios: BenchRatio[] = [];
    for (const s of ["a", "b"] as const) {
      const direct = by(`${s}: direct`);
      for (const via of ["gateway stdio", "gateway HTTP"] as const) {
        const g = by(`${s}: ${via}`);
        targets.push(
          metricWithTarget(
            `target ${s}: ${via} p50 added over direct`,
            g.p50 - direct.p50,
            "ms",
            TARGET.addedP50Ms,
          ),
          metricWithFloor(
            `target ${s}: ${via} / direct calls/s, ${IN_FLIGHT} in flight`,
            rate(g.name) / rate(direct.name),
            "x",
            s === "a" ? TARGET.trivialRate : TARGET.sourcesRate,
          ),
        );
        ratios.push(
          ratioOf(`${s} p50: ${via} / direct`, g.p50, direct.p50, "ms"),
          ratioOf(
            `${s} CPU/call, client + servers: ${via} / direct`,
            g.cpuProcessMs + g.cpuChildMs,
            direct.cpuProcessMs + direct.cpuChildMs,
            "ms",
          ),
          ratioOf(`${s} ${IN_FLIGHT} in flight: ${via} / direct`, rate(g.name), rate(direct.name), "calls/s"),
        );
      }
    }
    return {
      name: "gateway-user",
      description:
        "sciencegate serve gateway (stdio and HTTP) vs a direct MCP SDK call, trivial server and bundled sources server",
      parameters: {
        quick: QUICK,
        warmup: WARMUP,
        blockSize: BLOCK_SIZE,
        blocks: BLOCKS,
        inFlight: IN_FLIGHT,
        loadCalls: LOAD_CALLS,
        loadRounds: LOAD_ROUNDS,
        cli: f.sources.command.args.some((a) => a.endsWith(".ts")) ? "from source (tsx)" : "dist",
      },
      metrics: [
        ...targets,
        ...summaries.flatMap(caseMetrics),
        ...load.flatMap((l) => [
          { name: `${l.name}: ${IN_FLIGHT} in flight`, value: l.callsPerSecond, unit: "calls/s" },
          { name: `${l.name}: ${IN_FLIGHT} in flight, p99`, value: l.p99, unit: "ms" },
        ]),
        { name: "RSS: trivial server (direct)", value: rss(f.direct.trivial), unit: "MiB" },
        { name: "RSS: sources server (direct)", value: rss(f.direct.sources), unit: "MiB" },
        { name: "RSS: stdio gateway + its servers", value: rss(f.gatewayStdio), unit: "MiB" },
        { name: "RSS: HTTP gateway + its servers", value: rss(f.gatewayHttp), unit: "MiB" },
      ],
      ratios,
      notes: [
        "Routes: direct = an MCP SDK client on its own stdio child of the server; gateway = the same client on `sciencegate serve gateway --eager --config science.toml --manifests DIR` (stdio with --session, or --http 127.0.0.1:0 with the SDK's StreamableHTTPClientTransport), which runs its own children of both servers and governs them with their manifests (SQLite ledger and file CAS in a temp folder).",
        "Servers: (a) bench/lib/trivial-server.mjs 'lookup' (read-only, uncached); (b) 'sciencegate serve sources --only pubmed' PubMed search against a loopback fake provider, PubMed's manifest without rate limits. Each call's input differs, so nothing is answered from a cache.",
        `Sequential: ${WARMUP} warm-up calls per case, ${BLOCKS} block(s) of ${BLOCK_SIZE} per case, alternating; CPU per call over whole blocks: client = this process (main thread; + other threads in 'client + servers'), servers = every thread of the route's processes (/proc schedstat).`,
        `In flight: ${LOAD_CALLS} calls per round, ${IN_FLIGHT} at a time (closed loop), ${LOAD_ROUNDS} round(s) alternating, median calls/s.`,
      ],
    };
  } finally {
    await f.close();
  }
}
