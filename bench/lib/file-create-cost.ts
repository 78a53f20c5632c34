/**
 * What the data directory's filesystem charges for one small file create + rename (what the CAS does
 * up to three times per uncached call). On this machine it has varied between directories and over
 * the day from ~0.06 to ~1.2 ms, so the broker bench reports it next to the overhead it explains.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Median milliseconds of a 2 KB write to a temp name and a rename, in `dir`.
 * @param dir a directory on the filesystem to measure
 * @param samples how many files
 * @returns the median cost in ms
 */
export function fileCreateCostMs(dir: string, samples = 300): number {
  const probe = join(dir, `file-cost-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  const body = "x".repeat(2_000);
  const costs: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      writeFileSync(join(probe, `${i}.tmp`), body);
      renameSync(join(probe, `${i}.tmp`), join(probe, String(i)));
      costs.push(performance.now() - started);
    }
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  costs.sort((a, b) => a - b);
  return costs[Math.floor(costs.length / 2)] ?? Number.NaN;
}
