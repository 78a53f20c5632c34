/**
 * One replica for `rate-limit-replicas.replicas.test.ts`: its own pool and `PostgresRateLimiter` on
 * the shared database. It prints `ready`, waits for `go` on stdin, then starts call k at k × spacing:
 * acquire a lease in group `g`, make one HTTP request to the fake provider, release. One JSON line
 * per call on stdout: `{call, outcome}` with `ok` or the error code.
 */

import { isGovernanceError } from "../../../../src/core/errors.js";
import { openPostgres } from "../../../../src/core/index.js";
import {
  PostgresRateLimiter,
  type RateLimitGroupConfig,
} from "../../../../src/governance/rate-limit/index.js";

interface ReplicaPlan {
  url: string;
  providerUrl: string;
  replica: string;
  calls: number;
  spacingMs: number;
  leaseTtlMs: number;
  group: RateLimitGroupConfig;
}

const plan = JSON.parse(process.argv[2]!) as ReplicaPlan;
const db = await openPostgres(plan.url, { maxConnections: 4 });
const limiter = await PostgresRateLimiter.open(db, {
  groups: { g: plan.group },
  listen: true,
  leaseTtlMs: plan.leaseTtlMs,
  replicaId: plan.replica,
});
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
say({ ready: true });
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));

async function call(k: number): Promise<void> {
  try {
    const lease = await limiter.acquire("g");
    try {
      const response = await fetch(`${plan.providerUrl}/call?replica=${plan.replica}&call=${k}`);
      await response.text();
      say({
        call: k,
        outcome: response.ok ? "ok" : `HTTP ${response.status}`,
        queueWaitMs: lease.queueWaitMs,
      });
    } finally {
      lease.release();
    }
  } catch (error) {
    say({ call: k, outcome: isGovernanceError(error) ? error.code : String(error) });
  }
}

const started = performance.now();
const runs: Promise<void>[] = [];
for (let k = 0; k < plan.calls; k++) {
  const due = started + k * plan.spacingMs;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  runs.push(call(k));
}
await Promise.all(runs);
// The releases' statements are sent without waiting: they have landed once no lease of ours is left.
for (;;) {
  const [row] = await db.query<{ n: number }>(
    "SELECT count(*)::INTEGER AS n FROM sciencegate_rate_limit_leases WHERE replica = $1 AND expires_at > clock_timestamp()",
    [plan.replica],
  );
  if (row?.n === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await limiter.close();
await db.close();
say({ done: true });
process.stdin.destroy();
