/**
 * What each PostgreSQL round trip of a governed call costs at p50: the runtime users get from
 * `createGovernance({ storage: { postgres } })` on the trivial stdio server, beside the same runtime on
 * SQLite, in alternating blocks in one process on one embedded server. Before a call starts the runtime
 * makes two round trips that do not wait for a log flush (they run side by side): the session's next
 * permission epoch, and the rate-limit group's check for a cooldown or a queue another replica recorded.
 * Then the call's rows commit in one durable transaction.
 *
 * The counterfactual cases answer one or both of those statements in this process instead of sending
 * them (the driver's `query` is wrapped here, not in the package): the epoch from a local counter, the
 * group as clear. They show what each round trip costs, not a mode the package offers: without the
 * epoch, decisions in a session are not numbered across replicas; without the check, a cooldown or queue
 * recorded by another replica is not seen. Not a `*.bench.ts`:
 *
 *   npx tsx bench/postgres-parts.ts      (`BLOCKS`, `BLOCK` change the sizes)
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { openTestPostgres } from "../test/postgres/test-postgres.js";
import { quantile } from "./lib/latency.js";
import { trivialRuntime } from "./lib/user-servers.js";

const BLOCKS = Number(process.env.BLOCKS ?? 16);
const BLOCK = Number(process.env.BLOCK ?? 150);
const WARMUP = 300;

/** Which pre-call statements this process answers itself, for the block running now. */
const local = { epoch: false, clear: false };
let localEpoch = 0;
/** Statements answered here, so that a statement the patterns stopped matching shows (0) instead of passing unseen. */
const answered = { epoch: 0, clear: 0 };
const EPOCH = /INSERT INTO sciencegate_permission_epochs/;
const CLEAR = /^SELECT NOT EXISTS \(\s*SELECT 1 FROM sciencegate_rate_limit_groups/;

type Query = (...args: unknown[]) => unknown;
const original = pg.Client.prototype.query as Query;
(pg.Client.prototype as { query: Query }).query = function localOrSent(this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const text = typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "");
  let rows: Record<string, unknown>[] | undefined;
  if (local.epoch && EPOCH.test(text)) {
    answered.epoch++;
    rows = [{ epoch: String(++localEpoch) }];
  } else if (local.clear && CLEAR.test(text)) {
    answered.clear++;
    rows = [{ clear: true }];
  }
  if (rows === undefined) return original.apply(this, args);
  const result = { rows, rowCount: rows.length, command: "SELECT", fields: [] };
  const callback = args[args.length - 1];
  if (typeof callback !== "function") return Promise.resolve(result);
  process.nextTick(callback as (error: null, value: unknown) => void, null, result);
  return undefined;
};

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-pg-parts-"));
const server = await openTestPostgres();
try {
  await mkdir(join(scratch, "pg"));
  await mkdir(join(scratch, "sqlite"));
  const onPostgres = await trivialRuntime(join(scratch, "pg"), "parts", await server.createDatabase());
  const onSqlite = await trivialRuntime(join(scratch, "sqlite"), "parts");
  const cases = [
    { name: "SQLite", call: onSqlite.call, epoch: false, clear: false },
    { name: "PostgreSQL", call: onPostgres.call, epoch: false, clear: false },
    { name: "PostgreSQL, epoch answered locally", call: onPostgres.call, epoch: true, clear: false },
    {
      name: "PostgreSQL, rate-limit check answered locally",
      call: onPostgres.call,
      epoch: false,
      clear: true,
    },
    { name: "PostgreSQL, both answered locally", call: onPostgres.call, epoch: true, clear: true },
  ].map((c) => ({ ...c, times: [] as number[] }));
  let index = 0;
  for (let i = 0; i < WARMUP; i++)
    for (const c of cases) {
      Object.assign(local, { epoch: c.epoch, clear: c.clear });
      await c.call(index++);
    }
  for (let block = 0; block < BLOCKS; block++) {
    for (const c of block % 2 === 0 ? cases : [...cases].reverse()) {
      Object.assign(local, { epoch: c.epoch, clear: c.clear });
      for (let i = 0; i < BLOCK; i++) {
        const start = performance.now();
        await c.call(index++);
        c.times.push(performance.now() - start);
      }
    }
  }
  const sqliteP50 = quantile(
    [...(cases[0]?.times ?? [])].sort((a, b) => a - b),
    0.5,
  );
  console.log(
    `${BLOCKS} blocks of ${BLOCK} calls per case, alternating; answered locally: ${answered.epoch} epochs, ${answered.clear} rate-limit checks`,
  );
  for (const c of cases) {
    const sorted = [...c.times].sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5);
    console.log(
      `${c.name}: p50 ${p50.toFixed(3)} ms (${(p50 / sqliteP50).toFixed(2)}× SQLite), p90 ${quantile(sorted, 0.9).toFixed(3)} ms`,
    );
  }
  await onPostgres.governance.close();
  await onSqlite.governance.close();
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
}
