/**
 * Side-by-side measurement in blocks: each case runs a block of sequential calls, the cases alternate
 * block by block (the first case of each round rotates), and whatever a case leaves behind after its
 * calls return (a commit, a release, a timer) is awaited at the end of its own block, inside that
 * block's time and CPU, so it is charged to the case that caused it and never to the next one.
 * Per call: wall latency; per block: main-thread CPU, whole-process CPU and the CPU of the child
 * processes the case drives (a gateway).
 */
import { performance } from "node:perf_hooks";
import { type CpuSample, childCpu, cpuBetween, selfCpu } from "./cpu-meter.js";
import { quantile } from "./latency.js";

/** One way of making the same call. */
export interface BlockCase {
  name: string;
  /** One call; `index` is unique across the whole measurement, so inputs can differ per call. */
  call: (index: number) => Promise<unknown>;
  /**
   * Work the case's calls leave behind after they return, awaited at the end of each block inside its
   * timing. @default `settleTurns()`: two event-loop turns and a 2 ms timer
   */
  settle?: () => Promise<void>;
  /** Child processes whose CPU the case's calls cost (e.g. a gateway process), sampled around each block. */
  childPids?: () => readonly number[];
}

/** Options of `measureBlocks`. */
export interface BlockOptions {
  /** Untimed calls per case before the first block. */
  warmup: number;
  /** Sequential calls per block. */
  blockSize: number;
  /** Blocks per case. */
  blocks: number;
}

/** What one case measured. */
export interface CaseSummary {
  name: string;
  calls: number;
  p50: number;
  p90: number;
  p99: number;
  /** Mean latency (ms). */
  mean: number;
  /** Main-thread CPU per call (ms), over whole blocks including their settle. */
  cpuMainMs: number;
  /** Whole-process CPU per call (ms): main thread plus every other thread of this process. */
  cpuProcessMs: number;
  /** CPU per call (ms) of the case's child processes (all their threads); 0 when it has none. */
  cpuChildMs: number;
  /** The per-call latencies (ms), for callers that pool runs. */
  latencies: number[];
}

/**
 * Two event-loop turns and a short timer: enough for a `setImmediate` commit and the promise chains
 * behind it to run.
 */
export async function settleTurns(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 2));
}

function childCpuNow(c: BlockCase): CpuSample {
  let mainNs = 0;
  let processNs = 0;
  for (const pid of c.childPids?.() ?? []) {
    const sample = childCpu(pid);
    mainNs += sample.mainNs;
    processNs += sample.processNs;
  }
  return { mainNs, processNs };
}

/**
 * Measures the cases side by side, in alternating blocks.
 * @param cases the operations to compare
 * @param options warm-up, block size and block count
 * @returns a summary per case, in the order given
 */
export async function measureBlocks(
  cases: readonly BlockCase[],
  options: BlockOptions,
): Promise<CaseSummary[]> {
  let index = 0;
  for (const c of cases) {
    for (let i = 0; i < options.warmup; i++) await c.call(index++);
    await (c.settle ?? settleTurns)();
  }
  const latencies = cases.map(() => [] as number[]);
  const cpu = cases.map(() => ({ mainNs: 0, processNs: 0, childNs: 0 }));
  for (let block = 0; block < options.blocks; block++) {
    for (let k = 0; k < cases.length; k++) {
      const at = (block + k) % cases.length;
      const c = cases[at] as BlockCase;
      const out = latencies[at] as number[];
      const childBefore = childCpuNow(c);
      const before = selfCpu();
      for (let i = 0; i < options.blockSize; i++) {
        const input = index++;
        const start = performance.now();
        await c.call(input);
        out.push(performance.now() - start);
      }
      await (c.settle ?? settleTurns)();
      const spent = cpuBetween(before, selfCpu());
      const childSpent = cpuBetween(childBefore, childCpuNow(c));
      const sum = cpu[at] as { mainNs: number; processNs: number; childNs: number };
      sum.mainNs += spent.mainNs;
      sum.processNs += spent.processNs;
      sum.childNs += childSpent.processNs;
    }
  }
  return cases.map((c, at) => {
    const samples = latencies[at] as number[];
    const sorted = [...samples].sort((a, b) => a - b);
    const calls = samples.length;
    const spent = cpu[at] as { mainNs: number; processNs: number; childNs: number };
    const perCallMs = (ns: number) => ns / 1e6 / Math.max(1, calls);
    return {
      name: c.name,
      calls,
      p50: quantile(sorted, 0.5),
      p90: quantile(sorted, 0.9),
      p99: quantile(sorted, 0.99),
      mean: sorted.reduce((s, v) => s + v, 0) / Math.max(1, calls),
      cpuMainMs: perCallMs(spent.mainNs),
      cpuProcessMs: perCallMs(spent.processNs),
      cpuChildMs: perCallMs(spent.childNs),
      latencies: samples,
    };
  });
}

/** Calls per second of one case at a given load, and its CPU per call. */
export interface LoadSummary {
  name: string;
  /** Median calls/s over the rounds. */
  callsPerSecond: number;
  /** Main-thread CPU per call (ms), over all rounds. */
  cpuMainMs: number;
  /** CPU per call (ms) of the case's child processes. */
  cpuChildMs: number;
  /** Latency percentiles under load (ms), all rounds pooled. */
  p50: number;
  p99: number;
}

/**
 * Throughput side by side: per round, each case in turn runs `total` calls with `concurrency` in
 * flight (a closed loop: a caller starts its next call when its last one returns; `concurrency >=
 * total` starts them all at once), settles, and the next case follows.
 * @param cases the operations
 * @param options calls per round, calls in flight, rounds
 * @returns per case the median calls/s and CPU per call
 */
export async function measureLoad(
  cases: readonly BlockCase[],
  options: { total: number; concurrency: number; rounds: number },
): Promise<LoadSummary[]> {
  const rates = cases.map(() => [] as number[]);
  const latencies = cases.map(() => [] as number[]);
  const cpu = cases.map(() => ({ mainNs: 0, childNs: 0, calls: 0 }));
  let index = 1_000_000_000;
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const at = (round + k) % cases.length;
      const c = cases[at] as BlockCase;
      const out = latencies[at] as number[];
      const childBefore = childCpuNow(c);
      const before = selfCpu();
      let next = 0;
      const worker = async () => {
        while (next < options.total) {
          next++;
          const input = index++;
          const start = performance.now();
          await c.call(input);
          out.push(performance.now() - start);
        }
      };
      const start = performance.now();
      await Promise.all(Array.from({ length: Math.min(options.concurrency, options.total) }, worker));
      const wallMs = performance.now() - start;
      await (c.settle ?? settleTurns)();
      const spent = cpuBetween(before, selfCpu());
      const sum = cpu[at] as { mainNs: number; childNs: number; calls: number };
      sum.mainNs += spent.mainNs;
      sum.childNs += cpuBetween(childBefore, childCpuNow(c)).processNs;
      sum.calls += options.total;
      (rates[at] as number[]).push((options.total / wallMs) * 1000);
    }
  }
  return cases.map((c, at) => {
    const sortedRates = [...(rates[at] as number[])].sort((a, b) => a - b);
    const sorted = [...(latencies[at] as number[])].sort((a, b) => a - b);
    const spent = cpu[at] as { mainNs: number; childNs: number; calls: number };
    return {
      name: c.name,
      callsPerSecond: quantile(sortedRates, 0.5),
      cpuMainMs: spent.mainNs / 1e6 / Math.max(1, spent.calls),
      cpuChildMs: spent.childNs / 1e6 / Math.max(1, spent.calls),
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
    };
  });
}
