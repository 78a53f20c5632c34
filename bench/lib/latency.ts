/** Latency sampling and percentiles for sequential micro-benchmarks. */
import { performance } from "node:perf_hooks";

/** Percentiles of a set of per-call latencies, in ms. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

/**
 * The `q`-quantile of sorted samples by the nearest-rank method (no interpolation, so a p99 is a
 * latency that was actually observed).
 * @param sorted samples in ascending order
 * @param q quantile in [0, 1]
 * @returns the sample at that rank, or NaN for no samples
 */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

/**
 * @param samples per-call latencies in ms, in any order
 * @returns count, p50, p90, p99 and mean
 */
export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length);
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    mean,
  };
}

/** A named operation taking the call index (so each call can use a distinct input). */
export interface TimedCase {
  name: string;
  call: (index: number) => Promise<unknown>;
}

/** Options of `measureInterleaved`. */
export interface InterleaveOptions {
  /** Untimed calls per case before measuring (JIT, caches, connections). */
  warmup: number;
  /** Timed calls per case. */
  iterations: number;
  /** Calls per case in one block; the cases alternate block by block. @default 250 */
  blockSize?: number;
}

/**
 * Times sequential calls of several cases, alternating between them in blocks, so that drift
 * (GC pressure, a growing ledger file, CPU frequency) affects every case alike and the ratios
 * between them stay fair. Each call gets a fresh index, unique across warm-up and measurement.
 * @param cases the operations to compare
 * @param options warm-up, iterations and block size
 * @returns per-case latencies in ms, keyed by case name
 */
export async function measureInterleaved(
  cases: readonly TimedCase[],
  options: InterleaveOptions,
): Promise<Map<string, number[]>> {
  const blockSize = Math.max(1, options.blockSize ?? 250);
  const samples = new Map(cases.map((c) => [c.name, [] as number[]]));
  let index = 0;
  for (const c of cases) for (let i = 0; i < options.warmup; i++) await c.call(index++);
  for (let done = 0; done < options.iterations; done += blockSize) {
    const size = Math.min(blockSize, options.iterations - done);
    for (const c of cases) {
      const out = samples.get(c.name) ?? [];
      for (let i = 0; i < size; i++) {
        const input = index++;
        const start = performance.now();
        await c.call(input);
        out.push(performance.now() - start);
      }
    }
  }
  return samples;
}

/**
 * Runs `count` calls at once and times the whole batch.
 * @param count how many calls to start together
 * @param call the operation, given the call index
 * @returns wall time in ms and calls per second
 */
export async function measureBatch(
  count: number,
  call: (index: number) => Promise<unknown>,
): Promise<{ wallMs: number; callsPerSecond: number }> {
  const start = performance.now();
  await Promise.all(Array.from({ length: count }, (_, i) => call(i)));
  const wallMs = performance.now() - start;
  return { wallMs, callsPerSecond: (count / wallMs) * 1000 };
}

/**
 * Keeps `concurrency` calls in flight until `total` calls have finished (a closed loop: each worker
 * starts its next call when its last one returns), so throughput is measured at a steady load rather
 * than on one burst.
 * @param total calls in all
 * @param concurrency calls in flight at once
 * @param call the operation, given the call index (unique within this run)
 * @returns wall time in ms, calls per second and the latency of each call in ms
 */
export async function measureClosedLoop(
  total: number,
  concurrency: number,
  call: (index: number) => Promise<unknown>,
): Promise<{ wallMs: number; callsPerSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const index = next++;
      const start = performance.now();
      await call(index);
      latencies.push(performance.now() - start);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  const wallMs = performance.now() - start;
  return { wallMs, callsPerSecond: (total / wallMs) * 1000, latencies };
}
