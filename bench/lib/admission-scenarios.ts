/**
 * Rate-limit admission alone, side by side: the storage benchmark's third part. One `acquire` and its
 * `release` per call, as the broker takes per uncached call, on a group with a concurrency cap.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { PostgresRateLimiter } from "../../src/governance/rate-limit/postgres-rate-limiter.js";
import type { RateLimiter } from "../../src/governance/rate-limit/rate-limiter.js";
import { type LatencySummary, measureInterleaved, summarizeLatencies } from "./latency.js";

/** The group both limiters are given. */
export const ADMISSION_GROUP = "bench-admission";

/** What `measureAdmission` measured. */
export interface AdmissionResults {
  memory: LatencySummary;
  postgres: LatencySummary;
}

/**
 * Sequential `acquire` + `release` on both limiters, interleaved in blocks. `release` does not wait
 * for the database (the broker does not either), so a PostgreSQL release overlaps the next acquire.
 * @param limiters the in-process and the PostgreSQL limiter, both configured with `ADMISSION_GROUP`
 * @param warmup untimed calls per limiter
 * @param iterations timed calls per limiter
 * @returns latencies per limiter
 * @throws Error when the PostgreSQL limiter does not show a held lease, or its leases are not all
 *   released within 5 s of the last call
 */
export async function measureAdmission(
  limiters: { memory: RateLimiter; postgres: PostgresRateLimiter },
  warmup: number,
  iterations: number,
): Promise<AdmissionResults> {
  const held = await limiters.postgres.acquire(ADMISSION_GROUP);
  const active = (await limiters.postgres.stats(ADMISSION_GROUP)).active;
  held.release();
  if (active !== 1) throw new Error(`A held PostgreSQL lease shows as ${active} active leases, not 1.`);

  const admit = async (limiter: RateLimiter | PostgresRateLimiter) => {
    const lease = await limiter.acquire(ADMISSION_GROUP);
    lease.release();
  };
  const samples = await measureInterleaved(
    [
      { name: "memory", call: () => admit(limiters.memory) },
      { name: "postgres", call: () => admit(limiters.postgres) },
    ],
    { warmup, iterations },
  );
  for (let waited = 0; (await limiters.postgres.stats(ADMISSION_GROUP)).active > 0; waited += 50) {
    if (waited >= 5_000) throw new Error("PostgreSQL leases were still held 5 s after the last release.");
    await sleep(50);
  }
  return {
    memory: summarizeLatencies(samples.get("memory") ?? []),
    postgres: summarizeLatencies(samples.get("postgres") ?? []),
  };
}
