/**
 * Where the governed tool node's extra time in a `StateGraph` goes (`bench/lib/governed-fixture.ts`: the
 * governed graph beside the same graph with a node that calls the SDK directly). Not a `*.bench.ts`.
 *
 * - `PROFILE=1` (default): N runs (default 5,000, `PROFILE_CALLS`) of one executor (`PROFILE_EXECUTOR`:
 *   `graph`, `graphCheckpointed`, `rawGraph`, `rawGraphCheckpointed`, ...) under the V8 profiler after a
 *   warm-up; the profile goes to `bench/profiles/`, read it with `tsx bench/lib/cpu-profile-top.ts bench/profiles`.
 * - `PROFILE=0`: the SDK, the runtime and the graphs side by side in alternating blocks (`lib/blocks.ts`,
 *   `PROFILE_BLOCKS` blocks of `PROFILE_CALLS` calls), printing p50 and main-thread CPU per call and each
 *   graph's extra, (governed graph − SDK graph) − (runtime − SDK), split into the state schema, the
 *   runtime inside a graph task and the tool node (the breakdown graphs of the fixture).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type BlockCase, measureBlocks } from "./lib/blocks.js";
import { createGovernedFixture, type GovernedFixture } from "./lib/governed-fixture.js";

const CALLS = Number(process.env.PROFILE_CALLS ?? 5_000);
const WARMUP = 500;

async function profile(f: GovernedFixture): Promise<void> {
  const name = (process.env.PROFILE_EXECUTOR ?? "graph") as keyof GovernedFixture["executors"];
  const run = f.executors[name];
  if (!run) throw new Error(`No executor ${name}.`);
  for (let i = 0; i < WARMUP; i++) await run(i);
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", {
    interval: Number(process.env.PROFILE_INTERVAL ?? 100),
  });
  await session.post("Profiler.start");
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await run(WARMUP + i);
  const wall = performance.now() - start;
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  const out = fileURLToPath(new URL("./profiles/", import.meta.url));
  await mkdir(out, { recursive: true });
  const file = join(out, `graph-${name}-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
  await writeFile(file, JSON.stringify(profile));
  console.log(`Profile: ${file}\n${CALLS} runs of ${name}: ${(wall / CALLS).toFixed(3)} ms wall/run`);
}

async function compare(f: GovernedFixture): Promise<void> {
  const sdk: BlockCase = {
    name: "SDK callTool",
    call: async (index) => {
      const result = (await f.sdk.trivial.client.callTool({
        name: f.trivial.mcpToolName,
        arguments: f.trivial.args(index),
      })) as CallToolResult;
      f.trivial.check(result);
    },
  };
  const runtime: BlockCase = {
    name: "runtime invoke",
    call: async (index) => {
      f.calls.sqlite++;
      await f.sqlite.broker.invoke({
        sourceId: f.trivial.sourceId,
        toolId: f.trivial.toolId,
        input: f.trivial.args(index),
        sessionId: "bench",
      });
    },
  };
  const e = f.executors;
  const cases: BlockCase[] = [
    sdk,
    runtime,
    { name: "graph, SDK node", call: e.rawGraph },
    { name: "graph, governed tool node", call: e.graph },
    { name: "graph + MemorySaver, SDK node", call: e.rawGraphCheckpointed },
    { name: "graph + MemorySaver, governed tool node", call: e.graphCheckpointed },
    { name: "governed state, SDK node", call: e.schemaGraph },
    { name: "governed state, broker.invoke node", call: e.brokerGraph },
    { name: "+ MemorySaver, governed state, SDK node", call: e.schemaGraphCheckpointed },
    { name: "+ MemorySaver, governed state, broker.invoke node", call: e.brokerGraphCheckpointed },
  ];
  const summaries = await measureBlocks(cases, {
    warmup: 200,
    blockSize: CALLS,
    blocks: Number(process.env.PROFILE_BLOCKS ?? 3),
  });
  const by = (name: string) => summaries.find((s) => s.name === name) as (typeof summaries)[number];
  for (const s of summaries) {
    console.log(`${s.name.padEnd(42)} p50 ${s.p50.toFixed(3)} ms  CPU ${s.cpuMainMs.toFixed(3)} ms`);
  }
  const overhead = by("runtime invoke").p50 - by("SDK callTool").p50;
  const cpuOverhead = by("runtime invoke").cpuMainMs - by("SDK callTool").cpuMainMs;
  const ms = (p50: number, cpu: number) => `p50 ${p50.toFixed(3)} ms, CPU ${cpu.toFixed(3)} ms`;
  for (const [saver, governed, raw] of [
    ["", "graph, governed tool node", "graph, SDK node"],
    ["+ MemorySaver, ", "graph + MemorySaver, governed tool node", "graph + MemorySaver, SDK node"],
  ] as const) {
    const [g, r] = [by(governed), by(raw)];
    const schema = by(`${saver}governed state, SDK node`);
    const broker = by(`${saver}governed state, broker.invoke node`);
    console.log(
      `extra of ${governed}: ${ms(g.p50 - r.p50 - overhead, g.cpuMainMs - r.cpuMainMs - cpuOverhead)}`,
    );
    console.log(`  state schema: ${ms(schema.p50 - r.p50, schema.cpuMainMs - r.cpuMainMs)}`);
    console.log(
      `  runtime in a task: ${ms(broker.p50 - schema.p50 - overhead, broker.cpuMainMs - schema.cpuMainMs - cpuOverhead)}`,
    );
    console.log(`  tool node: ${ms(g.p50 - broker.p50, g.cpuMainMs - broker.cpuMainMs)}`);
  }
}

const f = await createGovernedFixture({ postgres: false });
try {
  if (process.env.PROFILE === "0") await compare(f);
  else await profile(f);
} finally {
  await f.close();
}
