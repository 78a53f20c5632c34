/** The shape every `bench/*.bench.ts` module returns, so `bench/run.ts` can print and store it uniformly. */

/** Whether a measured value is within its target; informational only, never a failure. */
export type TargetVerdict = "meets" | "misses";

/** One measured number, with an optional target printed next to it. */
export interface BenchMetric {
  /** What was measured, e.g. "broker overhead p50". */
  name: string;
  value: number;
  /** Unit of `value` and `target`, e.g. "ms", "calls/s". */
  unit: string;
  /** A bound the value should stay within (informational): an upper bound unless `atLeast`. */
  target?: number;
  /** The target is a lower bound (e.g. a throughput ratio). */
  atLeast?: boolean;
  /** `meets` when the value is within the target; set only when there is a target. */
  verdict?: TargetVerdict;
}

/** Ours against a baseline, measured side by side in the same run (CONVENTIONS.md "Benchmarks"). */
export interface BenchRatio {
  /** What is compared, e.g. "latency p50: broker / direct callTool". */
  name: string;
  ours: number;
  baseline: number;
  unit: string;
  /** `ours / baseline`. */
  ratio: number;
}

/** The outcome of one benchmark module. */
export interface BenchResult {
  /** Stable key under which `bench/results.json` stores the result (e.g. "broker"). */
  name: string;
  /** One line on what the benchmark does. */
  description: string;
  /** Run parameters (iterations, concurrency, ...), recorded so numbers can be compared later. */
  parameters: Record<string, number | string | boolean>;
  metrics: BenchMetric[];
  ratios: BenchRatio[];
  /** Free-form observations (where the time goes, caveats). */
  notes: string[];
}

/** What a `bench/*.bench.ts` module exports. */
export interface BenchModule {
  run(): Promise<BenchResult>;
}

/**
 * A metric with a target and its verdict.
 * @param name what was measured
 * @param value the measurement
 * @param unit unit of value and target
 * @param target upper bound (inclusive) the value should stay under
 * @returns the metric with `verdict` set
 */
export function metricWithTarget(name: string, value: number, unit: string, target: number): BenchMetric {
  return { name, value, unit, target, verdict: value <= target ? "meets" : "misses" };
}

/**
 * A metric with a lower-bound target and its verdict.
 * @param name what was measured
 * @param value the measurement
 * @param unit unit of value and target
 * @param target lower bound (inclusive) the value should reach
 * @returns the metric with `atLeast` and `verdict` set
 */
export function metricWithFloor(name: string, value: number, unit: string, target: number): BenchMetric {
  return { name, value, unit, target, atLeast: true, verdict: value >= target ? "meets" : "misses" };
}

/**
 * A ratio row.
 * @param name what is compared
 * @param ours our measurement
 * @param baseline the baseline measurement (same unit)
 * @param unit unit of both
 * @returns the row with `ratio = ours / baseline` (NaN when the baseline is 0)
 */
export function ratioOf(name: string, ours: number, baseline: number, unit: string): BenchRatio {
  return { name, ours, baseline, unit, ratio: baseline === 0 ? Number.NaN : ours / baseline };
}
