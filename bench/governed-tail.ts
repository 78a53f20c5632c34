/**
 * Where a governed call's slow calls come from: the runtime from `createGovernance` (SQLite ledger, its
 * checkpointer thread) beside the raw MCP SDK client on the same trivial stdio server, in alternating
 * blocks. For each case: p50/p99/p99.9, how many calls took over `SLOW_MS`, how many of those overlapped a
 * garbage collection, and the event loop's delay while the case ran (a high delay means the main thread
 * was held: by a collection, by synchronous work, or by not being scheduled on a busy machine).
 *
 * A third case is the control: the SDK's call followed by arithmetic on the main thread for as long as
 * the runtime's median exceeds the SDK's (measured as the blocks go). It has no ledger, no checkpoint and
 * allocates nothing, so its slow calls are what a call that long meets on the machine itself; the
 * runtime's slow calls beyond the control's are the runtime's own.
 *
 * Usage: `npx tsx bench/governed-tail.ts` (`CALLS`, `BLOCK`, `SLOW_MS` to change the sizes).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks";
import { quantile } from "./lib/latency.js";
import { connectStdio, trivialRuntime } from "./lib/user-servers.js";

const CALLS = Number(process.env.CALLS ?? 3_000);
const BLOCK = Number(process.env.BLOCK ?? 250);
const WARMUP = 300;
const SLOW_MS = Number(process.env.SLOW_MS ?? 3);

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-tail-"));
const { trivial, governance, call } = await trivialRuntime(scratch, "tail");
const sdk = await connectStdio("tail-bench", trivial.command, trivial.env);

interface Case {
  name: string;
  call: (index: number) => Promise<unknown>;
  starts: number[];
  times: number[];
  /** The event loop's delay per block: its p99 and its maximum, in ms. */
  delays: { p99: number; max: number }[];
}
const cases: Case[] = [
  {
    name: "SDK callTool",
    call: async (i: number) =>
      trivial.check(
        (await sdk.client.callTool({ name: trivial.mcpToolName, arguments: trivial.args(i) })) as never,
      ),
  },
  {
    name: "runtime invoke (SQLite)",
    call,
  },
  {
    name: "SDK callTool + main-thread spin",
    call: async (i: number) => {
      const result = await sdk.client.callTool({ name: trivial.mcpToolName, arguments: trivial.args(i) });
      spin(spinIterations);
      return trivial.check(result as never);
    },
  },
].map((c) => ({ ...c, starts: [], times: [], delays: [] }));

/**
 * The control's spin: the runtime's median less the SDK's, first from the warm-up, then from the blocks
 * measured so far (see the header).
 */
let spinMs = 0;
let spinIterations = 0;
/** Arithmetic only, so that the control allocates nothing a collection would have to clear. */
let spinSink = 0;
function spin(iterations: number) {
  let x = spinSink | 0;
  for (let i = 0; i < iterations; i++) x = (x * 1_103_515_245 + 12_345) | 0;
  spinSink = x;
}
const calibration = performance.now();
spin(50_000_000);
const iterationsPerMs = 50_000_000 / (performance.now() - calibration);
const median = (times: number[]) =>
  quantile(
    [...times].sort((a, b) => a - b),
    0.5,
  );
/** Sets the control's spin from the SDK's and the runtime's times. */
function followRuntime(sdkTimes: number[], runtimeTimes: number[]) {
  spinMs = Math.max(0, median(runtimeTimes) - median(sdkTimes));
  spinIterations = Math.round(spinMs * iterationsPerMs);
}
let index = 0;
const warm: number[][] = cases.map(() => []);
for (let i = 0; i < WARMUP; i++)
  for (const [k, c] of cases.entries()) {
    const start = performance.now();
    await c.call(index++);
    warm[k]?.push(performance.now() - start);
  }
// The second half of the warm-up, once the code is compiled.
followRuntime((warm[0] ?? []).slice(WARMUP / 2), (warm[1] ?? []).slice(WARMUP / 2));

/** Garbage collections as [start, end] in `performance.now()` time. */
const collections: [number, number][] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    collections.push([entry.startTime, entry.startTime + entry.duration]);
});
observer.observe({ entryTypes: ["gc"] });
for (let block = 0; block < CALLS / BLOCK; block++) {
  for (const c of block % 2 === 0 ? cases : [...cases].reverse()) {
    // A histogram per block: one re-enabled would count the time it was off as one long delay.
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    for (let i = 0; i < BLOCK; i++) {
      const start = performance.now();
      await c.call(index++);
      c.starts.push(start);
      c.times.push(performance.now() - start);
    }
    // What the block left behind (a commit, a checkpoint's end) runs inside its own measurement.
    await new Promise((resolve) => setTimeout(resolve, 2));
    delay.disable();
    c.delays.push({ p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 });
  }
  // Both have run a block by now: the control follows the runtime.
  followRuntime(cases[0]?.times ?? [], cases[1]?.times ?? []);
}
observer.disconnect();

const overlapsCollection = (start: number, time: number) =>
  collections.some(([from, to]) => from < start + time && to > start);
const ms = (value: number) => `${value.toFixed(2)} ms`;
console.log(
  `${CALLS} calls per case in blocks of ${BLOCK}; slow = over ${SLOW_MS} ms; control spin ${ms(spinMs)} per call at the end`,
);
for (const c of cases) {
  const sorted = [...c.times].sort((a, b) => a - b);
  const slow = c.times
    .map((time, i) => [c.starts[i] ?? 0, time] as const)
    .filter(([, time]) => time > SLOW_MS);
  const withCollection = slow.filter(([start, time]) => overlapsCollection(start, time)).length;
  console.log(
    `${c.name}: p50 ${ms(quantile(sorted, 0.5))}, p99 ${ms(quantile(sorted, 0.99))}, p99.9 ${ms(quantile(sorted, 0.999))}; ` +
      `slow ${slow.length} (${withCollection} overlapping a garbage collection); ` +
      `event-loop delay p99 ${ms(
        quantile(
          c.delays.map((d) => d.p99).sort((a, b) => a - b),
          0.5,
        ),
      )} (median of blocks), ` +
      `max ${ms(Math.max(...c.delays.map((d) => d.max)))}`,
  );
}
const gcTotal = collections.reduce((sum, [from, to]) => sum + to - from, 0);
console.log(`garbage collections: ${collections.length}, ${ms(gcTotal)} in all`);

await sdk.close();
await governance.close();
await rm(scratch, { recursive: true, force: true });
