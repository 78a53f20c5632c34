/**
 * Shared rate limits and the shared ledger with real replicas, through the whole governed path:
 * three Node processes (`replicas/governance-replica.ts` via tsx), each a `createGovernance` on one
 * real PostgreSQL (`storage.postgres`), each calling `governance.broker.invoke` on a source whose MCP
 * server runs in that process and makes one HTTP request per call to a loopback fake provider in this
 * process. The provider, the lease log and the process harness are shared with the limiter's own
 * replica test (`test/replicas/`). Slow (under a minute): `npm run test:replicas`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { PostgresDatabase } from "../../src/core/index.js";
import type { RateLimitGroupConfig } from "../../src/governance/rate-limit/index.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import { ARRIVALS_PER_SECOND_BOUND, maxInWindow, minGap, startProvider } from "../replicas/fake-provider.js";
import {
  databaseNow,
  expectReturnedByExpiry,
  type LeaseRow,
  leaseLog,
  leaseLoggedDatabase,
  maxOverlap,
  peakLeases,
} from "../replicas/lease-log.js";
import { type CallReport, type Replica, startReplica } from "../replicas/replica-process.js";

const WORKER = fileURLToPath(new URL("./replicas/governance-replica.ts", import.meta.url));
const GROUP: RateLimitGroupConfig = { maxConcurrentRequests: 2, rateLimitPerSecond: 5, maxQueueDepth: 20 };
const SPACING_MS = 200;
/**
 * The provider-side rate check of `fake-provider.ts`, with one more late send: through the governed
 * path, the MCP round trip and the tool handler run between admission and the request, on an event
 * loop that also serves the replica's other calls (their ledger rows, queue statements and wake-ups),
 * and a request 199 ms later than the next one's was seen at load 6. Admissions are checked exactly.
 */
const ARRIVALS_PER_SECOND = ARRIVALS_PER_SECOND_BOUND + 1;

let server: TestPostgres;
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-governance-replicas-"));
const manifests = join(scratch, "manifests");
beforeAll(async () => {
  server = await openTestPostgres();
  await mkdir(manifests);
  // Each call's input names its replica and number: no two calls share a cache key.
  const search = makeTool({
    id: "search",
    inputSchema: {
      type: "object",
      properties: { replica: { type: "string" }, call: { type: "integer" } },
      required: ["replica", "call"],
    },
  });
  await writeFile(join(manifests, "demo.json"), JSON.stringify(makeSource({ tools: [search] })));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** One ledger row of a replica's call. */
interface LedgerRow {
  thread_id: string;
  tool_call_id: string;
  invocation_id: string;
  status: "ok" | "error";
  code: string | null;
  attempts: number;
  cache_hit: boolean;
}

async function ledgerRows(db: PostgresDatabase): Promise<LedgerRow[]> {
  return db.query<LedgerRow>(
    `SELECT thread_id, tool_call_id, invocation_id, status, error->>'code' AS code,
            attempts::int AS attempts, cache_hit
     FROM sciencegate_invocations`,
  );
}

/** The rows of each call (replica `r`, call k is thread `thread-r`, tool call `call-k`). */
function rowsByCall(rows: LedgerRow[]): Map<string, LedgerRow[]> {
  const byCall = new Map<string, LedgerRow[]>();
  for (const row of rows) {
    const key = `${row.thread_id.replace(/^thread-/, "")}/${row.tool_call_id.replace(/^call-/, "")}`;
    byCall.set(key, [...(byCall.get(key) ?? []), row]);
  }
  return byCall;
}

/** Every call the replicas reported, keyed `<replica>/<call>`. */
function reports(replicas: Replica[]): Map<string, CallReport> {
  return new Map(
    replicas.flatMap((r) => [...r.outcomes].map(([call, report]) => [`${r.name}/${call}`, report])),
  );
}

/**
 * Checks that a reported call has exactly one row, the one its invocation id names, with its outcome;
 * and that a refusal came back as a structured, retryable `GovernanceError` that was not retried.
 */
function expectRecorded(key: string, report: CallReport, rows: LedgerRow[] | undefined): void {
  expect(rows, key).toHaveLength(1);
  const [row] = rows!;
  expect(row!.invocation_id, key).toBe(report.invocationId);
  if (report.outcome === "ok") {
    expect(row, key).toMatchObject({ status: "ok", code: null, attempts: 1, cache_hit: false });
    expect(report, key).toMatchObject({ attempts: 1, cacheHit: false });
  } else {
    expect(report, key).toMatchObject({
      outcome: "RATE_LIMIT_QUEUE_FULL",
      governanceError: true,
      name: "GovernanceError",
      retryable: true,
      attempts: 0,
    });
    expect(row, key).toMatchObject({ status: "error", code: "RATE_LIMIT_QUEUE_FULL", attempts: 0 });
  }
}

/** Which replica holds a lease: the runtime names its limiter `<host>:<pid>:<random>`. */
function replicaOf(row: LeaseRow, replicas: Replica[]): string {
  const pid = Number(row.replica.split(":").at(-2));
  return replicas.find((r) => r.child.pid === pid)?.name ?? row.replica;
}

async function startReplicas(
  names: string[],
  plan: { url: string; providerUrl: string; calls: number; leaseTtlMs: number },
): Promise<Replica[]> {
  return Promise.all(
    names.map((replica) =>
      startReplica(WORKER, {
        ...plan,
        replica,
        manifests,
        dataDir: join(scratch, "data"),
        spacingMs: 150,
        group: GROUP,
      }),
    ),
  );
}

describe("createGovernance on one PostgreSQL, three replica processes, calls through broker.invoke", () => {
  test("300 calls: never above 2 concurrent, never faster than 5/s, exactly one ledger row per call", async () => {
    const { url, db } = await leaseLoggedDatabase(() => server.createDatabase());
    const provider = startProvider((_, call) => 50 + ((call * 37) % 450));
    const providerUrl = await provider.listen();
    const replicas: Replica[] = [];
    try {
      replicas.push(
        ...(await startReplicas(["r1", "r2", "r3"], { url, providerUrl, calls: 100, leaseTtlMs: 10_000 })),
      );
      for (const r of replicas) r.go();
      const codes = await Promise.all(replicas.map((r) => r.done));
      expect(codes).toEqual([0, 0, 0]);

      const reported = reports(replicas);
      expect(reported.size).toBe(300);
      const outcomes = [...reported.values()];
      const ok = outcomes.filter((o) => o.outcome === "ok").length;
      const full = outcomes.filter((o) => o.outcome === "RATE_LIMIT_QUEUE_FULL").length;
      expect(ok + full).toBe(300);
      expect(full).toBeGreaterThan(0);

      // The ledger: one row per call, ok or refused, and no row for a call nobody made.
      const rows = await ledgerRows(db);
      const byCall = rowsByCall(rows);
      for (const [key, report] of reported) expectRecorded(key, report, byCall.get(key));
      expect(rows).toHaveLength(300);
      expect(new Set(rows.map((row) => row.invocation_id)).size).toBe(300);

      // The provider saw exactly the calls that reported ok, each once (nothing retried, nothing cached).
      const seen = provider.arrivals.map((a) => `${a.replica}/${a.call}`).sort();
      const reportedOk = [...reported]
        .filter(([, o]) => o.outcome === "ok")
        .map(([key]) => key)
        .sort();
      expect(seen).toEqual(reportedOk);

      const log = await leaseLog(db);
      expect(log).toHaveLength(ok);
      expect(log.every((row) => row.ended !== null)).toBe(true); // every slot came back
      const admissionGap = minGap(log.map((row) => row.acquired));
      const arrivalTimes = provider.arrivals.map((a) => a.at);
      const arrivalGap = minGap(arrivalTimes);
      const perWindow = maxInWindow(arrivalTimes, 1_000);
      const perReplica = Object.fromEntries(
        replicas.map((r) => [r.name, log.filter((l) => replicaOf(l, replicas) === r.name).length]),
      );
      const span = (log.at(-1)!.acquired - log[0]!.acquired) / 1000;
      const refusalMs = outcomes
        .filter((o) => o.outcome !== "ok")
        .map((o) => o.elapsedMs as number)
        .sort((a, b) => a - b);
      console.log(
        `broker replicas: ${ok} ok + ${full} RATE_LIMIT_QUEUE_FULL = ${reported.size} calls; ` +
          `ledger rows ${rows.length} for ${reported.size} calls (${rows.filter((r) => r.status === "ok").length} ok, ` +
          `${rows.filter((r) => r.code === "RATE_LIMIT_QUEUE_FULL").length} RATE_LIMIT_QUEUE_FULL, each refusal attempts 0, ` +
          `returned in ${refusalMs[Math.floor(refusalMs.length / 2)]!.toFixed(0)} ms median / ${refusalMs.at(-1)!.toFixed(0)} ms max); ` +
          `provider arrivals ${provider.arrivals.length}; admitted per replica ${JSON.stringify(perReplica)}; ` +
          `max concurrent ${maxOverlap(log)} (leases) / ${provider.maxActive} (at the provider); ` +
          `min spacing between starts ${admissionGap.toFixed(1)} ms (admissions) / ${arrivalGap.toFixed(1)} ms (arrivals); ` +
          `at most ${perWindow} arrivals in any 1 s; ${(ok / span).toFixed(2)} starts/s over ${span.toFixed(1)} s`,
      );
      expect(maxOverlap(log), JSON.stringify(peakLeases(log))).toBeLessThanOrEqual(2);
      expect(provider.maxActive).toBeLessThanOrEqual(2);
      expect(admissionGap).toBeGreaterThanOrEqual(SPACING_MS - 0.01);
      expect(perWindow).toBeLessThanOrEqual(ARRIVALS_PER_SECOND);
      for (const n of Object.values(perReplica)) expect(n).toBeGreaterThan(0);
    } finally {
      for (const r of replicas) r.child.kill("SIGKILL");
      await provider.close();
      await db.close();
    }
  }, 180_000);

  test("a replica SIGKILLed while its calls hold both slots: they return after the lease TTL, the others finish, no row is lost", async () => {
    const { url, db } = await leaseLoggedDatabase(() => server.createDatabase());
    const TTL = 2_000;
    const provider = startProvider((replica) => (replica === "victim" ? "never" : 100));
    const providerUrl = await provider.listen();
    const replicas: Replica[] = [];
    try {
      replicas.push(
        ...(await startReplicas(["r1", "r2", "victim"], { url, providerUrl, calls: 40, leaseTtlMs: TTL })),
      );
      const [, , victim] = replicas as [Replica, Replica, Replica];
      for (const r of replicas) r.go();
      // The victim holds both slots once two of its requests are in flight (the provider never answers
      // them); it is killed once it has also reported recorded calls (refusals, the queue being full).
      const deadline = performance.now() + 60_000;
      while ((provider.inFlight.get("victim") ?? 0) < 2 || victim.outcomes.size < 3) {
        if (performance.now() > deadline) throw new Error("the victim never held both slots");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const killedAt = await databaseNow(db);
      victim.child.kill("SIGKILL");
      expect(await victim.done).toBeNull(); // killed, not exited
      const goneBy = await databaseNow(db);
      // Every line it printed, it printed before it died: each is a call whose row it had waited for.
      const victimReported = new Map(victim.outcomes);

      // Its lease rows go away only when they expire (the survivors reap them), never by a release.
      let returnedAfter = Number.NaN;
      for (;;) {
        const [row] = await db.query<{ held: number; now: number }>(
          `SELECT count(*)::int AS held, extract(epoch FROM clock_timestamp())::float8 * 1000 AS now
           FROM sciencegate_rate_limit_leases WHERE replica LIKE $1`,
          [`%:${victim.child.pid}:%`],
        );
        if (row!.held === 0) {
          returnedAfter = row!.now - killedAt;
          break;
        }
        if (row!.now - killedAt > 10 * TTL) throw new Error("the victim's slots never came back");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const codes = await Promise.all(replicas.slice(0, 2).map((r) => r.done));
      expect(codes).toEqual([0, 0]);

      const survivors = reports(replicas.slice(0, 2));
      expect(survivors.size).toBe(80);
      const byCall = rowsByCall(await ledgerRows(db));
      // Nothing lost: every survivor call has its one row, and so has every call the victim reported.
      for (const [key, report] of survivors) expectRecorded(key, report, byCall.get(key));
      for (const [call, report] of victimReported) {
        expectRecorded(`victim/${call}`, report, byCall.get(`victim/${call}`));
      }
      const victimRows = [...byCall].filter(([key]) => key.startsWith("victim/"));
      // The calls that held the slots died with it before they had a row: no half-written rows either.
      const heldCalls = provider.arrivals
        .filter((a) => a.replica === "victim")
        .map((a) => `victim/${a.call}`);
      expect(heldCalls).toHaveLength(2);
      for (const key of heldCalls) expect(byCall.get(key), key).toBeUndefined();

      const log = await leaseLog(db);
      const victimOf = (row: LeaseRow) => replicaOf(row, replicas) === "victim";
      const firstAfterKill = log.find((row) => !victimOf(row) && row.acquired > killedAt);
      const held = log.filter((row) => victimOf(row) && row.ended! > killedAt);
      expect(held).toHaveLength(2);
      const { returnedMs, heartbeatAgeMs } = expectReturnedByExpiry(
        held,
        { before: killedAt, after: goneBy },
        TTL,
      );
      const survivorOutcomes = [...survivors.values()];
      console.log(
        `broker SIGKILL: the victim held ${held.length} slots; they returned (expired) ${returnedMs.map((ms) => ms.toFixed(0)).join(" and ")} ms after the kill ` +
          `(its last heartbeat ${heartbeatAgeMs.map((ms) => ms.toFixed(0)).join(" and ")} ms before it), its lease rows gone by ${returnedAfter.toFixed(0)} ms ` +
          `(TTL ${TTL} ms, storage.rateLimitLeaseTtlMs); next admission of a survivor ${(firstAfterKill!.acquired - killedAt).toFixed(0)} ms after the kill; ` +
          `survivors: ${survivorOutcomes.filter((o) => o.outcome === "ok").length} ok + ${survivorOutcomes.filter((o) => o.outcome !== "ok").length} RATE_LIMIT_QUEUE_FULL = 80, 80 ledger rows; ` +
          `victim: ${victimReported.size} calls reported before the kill, all with their row (${victimRows.length} victim rows in all), ` +
          `its 2 calls in flight have none; max concurrent ${maxOverlap(log)} (leases, the dead ones counted until they expired)`,
      );
      expect(returnedAfter).toBeLessThan(TTL + 1_000);
      // Both slots were the victim's: nobody started before the first of them expired.
      expect(firstAfterKill!.acquired).toBeGreaterThanOrEqual(Math.min(...held.map((r) => r.ended!)));
      expect(maxOverlap(log), JSON.stringify(peakLeases(log))).toBeLessThanOrEqual(2);
      expect(minGap(log.map((row) => row.acquired))).toBeGreaterThanOrEqual(SPACING_MS - 0.01);
      expect(log.every((row) => row.ended !== null)).toBe(true);
    } finally {
      for (const r of replicas) r.child.kill("SIGKILL");
      await provider.close();
      await db.close();
    }
  }, 180_000);
});
