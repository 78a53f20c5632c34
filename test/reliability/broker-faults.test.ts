/**
 * Broker-level faults of the reliability suite (issue 10, item 3), part 1: a flood of calls against
 * tight limits, and 429 storms with Retry-After. Part 2 (responses, identities, hosts) is in
 * broker-faults-responses.test.ts.
 */
import { describe, expect } from "vitest";
import { toolErrorResult } from "../../src/contract/upstream-error.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import {
  call,
  codeOf,
  driveAll,
  type Handler,
  macrotask,
  ok,
  rig,
  type Settled,
  settle,
} from "./broker-faults-rig.js";
import { faultTest, printFaultSummary } from "./fault-report.js";

printFaultSummary("Broker faults: flood and 429 storms (test/reliability/broker-faults.test.ts)");

describe("flood", () => {
  faultTest(
    "flood of 500 calls",
    "500 calls at once; limits 2 concurrent, 5/s, queue depth 100",
    async () => {
      const events: { query: string; at: number }[] = [];
      let inFlight = 0;
      let maxInFlight = 0;
      const clock = new ManualClock(0);
      const r = await rig(
        {
          search: async ({ query }) => {
            events.push({ query: String(query), at: clock.now() });
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            await clock.sleep(300); // the upstream's latency, on the test clock
            inFlight--;
            return ok(demoResult("search", [String(query)]));
          },
        },
        { maxConcurrentRequests: 2, rateLimitPerSecond: 5, maxQueueDepth: 100 },
        clock,
      );
      const promises = Array.from({ length: 500 }, (_, i) =>
        settle(r.broker.invoke(call("search", `q${i}`))),
      );
      const early: Settled[] = [];
      for (const p of promises) p.then((s) => early.push(s));
      // Before any time passes, the queue is full and every call beyond it is refused.
      for (let i = 0; i < 200 && early.length < 399; i++) await macrotask();
      expect(r.clock.now()).toBe(0);
      expect(early.map(codeOf).filter((c) => c === "RATE_LIMIT_QUEUE_FULL")).toHaveLength(399);
      expect(r.limiter.stats("demo")).toMatchObject({ queued: 100 });

      await driveAll(r.clock, promises);
      const settled = await Promise.all(promises);
      const codes = settled.map(codeOf);
      const served = codes.flatMap((c, i) => (c === "ok" ? [`q${i}`] : []));
      expect(codes.filter((c) => c !== "ok" && c !== "RATE_LIMIT_QUEUE_FULL")).toEqual([]);
      expect(served).toEqual(Array.from({ length: 101 }, (_, i) => `q${i}`));
      expect(maxInFlight).toBe(2);
      // FIFO: the server saw the calls in submission order.
      expect(events.map((e) => e.query)).toEqual(served);
      // Pacing: at most 5 starts in any 1 s window of the test clock.
      const starts = events.map((e) => e.at);
      const perWindow = starts.map((t) => starts.filter((s) => s >= t && s < t + 1000).length);
      expect(Math.max(...perWindow)).toBeLessThanOrEqual(5);
      const rows = await r.ledger.query();
      expect(rows).toHaveLength(500);
      expect(new Set(rows.map((row) => row.invocationId)).size).toBe(500);
      const full = rows.filter((row) => row.error?.code === "RATE_LIMIT_QUEUE_FULL");
      expect(full.every((row) => row.durationMs === 0 && row.attempts === 0)).toBe(true);
      const waits = rows.filter((row) => row.status === "ok").map((row) => row.queueWaitMs);
      expect(Math.max(...waits)).toBeGreaterThanOrEqual(100 * 200);
      return `ok=${served.length} queue_full=${full.length} max_in_flight=${maxInFlight} max_starts_per_1s=${Math.max(...perWindow)} rows=${rows.length} max_queue_wait=${Math.max(...waits)}ms clock=${r.clock.now()}ms`;
    },
  );
});

/** A tool that answers 429 with `Retry-After` while `storm.left` > 0, recording each hit's time. */
function stormTool(clock: ManualClock, storm: { left: number; retryAfterMs: number }) {
  const hits: { at: number; status: number }[] = [];
  const handler: Handler = ({ query }) => {
    const at = clock.now();
    if (storm.left > 0) {
      storm.left--;
      hits.push({ at, status: 429 });
      return toolErrorResult({
        code: "rate_limited",
        message: "Too many requests",
        status: 429,
        retryAfterMs: storm.retryAfterMs,
      });
    }
    hits.push({ at, status: 200 });
    return ok(demoResult("storm", [String(query)]));
  };
  return { hits, handler };
}

/** Hits that came inside the Retry-After window of an earlier 429 (the group should have been paused). */
function hitsDuringCooldown(hits: { at: number; status: number }[], retryAfterMs: number): number {
  return hits.filter((hit) =>
    hits.some((h) => h.status === 429 && hit.at > h.at && hit.at < h.at + retryAfterMs),
  ).length;
}

describe("429 storms", () => {
  faultTest(
    "429 storm within the retry budget",
    "2 × 429 (Retry-After 2 s) then 200; a second call in the group",
    async () => {
      const clock = new ManualClock(0);
      const storm = stormTool(clock, { left: 2, retryAfterMs: 2_000 });
      const searchHits: number[] = [];
      const r = await rig(
        {
          storm: storm.handler,
          search: ({ query }) => {
            searchHits.push(clock.now());
            return ok(demoResult("search", [String(query)]));
          },
        },
        { maxConcurrentRequests: 4 },
        clock,
      );
      const first = settle(r.broker.invoke(call("storm", "a")));
      while (storm.hits.length === 0) await macrotask();
      const second = settle(r.broker.invoke(call("search", "b")));
      await driveAll(r.clock, [first, second]);
      const a = await first;
      expect(codeOf(a)).toBe("ok");
      expect("ok" in a && a.ok.attempts).toBe(3);
      expect(storm.hits.map((h) => [h.at, h.status])).toEqual([
        [0, 429],
        [2_000, 429],
        [4_000, 200],
      ]);
      // The second caller waited out the first cooldown: the whole group was paused.
      expect(searchHits).toHaveLength(1);
      expect(searchHits[0]).toBeGreaterThanOrEqual(2_000);
      expect(codeOf(await second)).toBe("ok");
      const rows = await r.ledger.query();
      expect(rows.map((row) => [row.toolId, row.status, row.attempts]).sort()).toEqual([
        ["search", "ok", 1],
        ["storm", "ok", 3],
      ]);
      return `attempts=3 upstream_hits=${storm.hits.length} retries_at=${storm.hits.map((h) => h.at).join("/")}ms other_call_admitted_at=${searchHits[0]}ms rows=${rows.length}`;
    },
  );

  faultTest(
    "429 storm, concurrent callers",
    "6 callers, 2 concurrent; 3 × 429 (Retry-After 1 s) then 200",
    async () => {
      const clock = new ManualClock(0);
      const storm = stormTool(clock, { left: 3, retryAfterMs: 1_000 });
      const r = await rig({ storm: storm.handler }, { maxConcurrentRequests: 2 }, clock);
      const promises = Array.from({ length: 6 }, (_, i) => settle(r.broker.invoke(call("storm", `c${i}`))));
      await driveAll(r.clock, promises);
      const codes = (await Promise.all(promises)).map(codeOf);
      expect(codes).toEqual(Array(6).fill("ok"));
      // Every hit is either one of the 3 storm answers or one success per caller: no wasted hit.
      expect(storm.hits.filter((h) => h.status === 429)).toHaveLength(3);
      expect(storm.hits).toHaveLength(3 + 6);
      expect(hitsDuringCooldown(storm.hits, 1_000)).toBe(0);
      expect(await r.ledger.query()).toHaveLength(6);
      return `ok=6/6 upstream_hits=${storm.hits.length} (3×429 + 6×200) hits_inside_cooldown=0 finished_at=${r.clock.now()}ms`;
    },
  );

  faultTest(
    "429 storm longer than the budget",
    "429 (Retry-After 2 s) on every attempt, then a new call in the group",
    async () => {
      const clock = new ManualClock(0);
      const storm = stormTool(clock, { left: 1_000, retryAfterMs: 2_000 });
      const r = await rig({ storm: storm.handler }, { maxConcurrentRequests: 4 }, clock);
      const failed = settle(r.broker.invoke(call("storm", "a")));
      await driveAll(r.clock, [failed], 100);
      const outcome = await failed;
      expect(codeOf(outcome)).toBe("RATE_LIMITED");
      const error = "error" in outcome ? outcome.error : undefined;
      expect(error).toMatchObject({ retryable: true, attempts: 3, retryAfterMs: 2_000 });
      expect(storm.hits.map((h) => h.at)).toEqual([0, 2_000, 4_000]);
      const [row] = await r.ledger.query();
      expect(row?.error).toMatchObject({ code: "RATE_LIMITED", attempts: 3, retryAfterMs: 2_000 });
      // The last 429 still pauses the group: the next caller is not let through before its Retry-After.
      const failedAt = r.clock.now();
      const next = settle(r.broker.invoke(call("storm", "b")));
      await driveAll(r.clock, [next], 100);
      expect(storm.hits[3]?.at).toBeGreaterThanOrEqual(failedAt + 2_000);
      return `RATE_LIMITED attempts=3 retryAfterMs=2000 hits=[0,2000,4000]ms failed_at=${failedAt}ms next_call_first_hit=${storm.hits[3]?.at}ms`;
    },
  );

  faultTest(
    "429 with Retry-After past the deadline",
    "429 with Retry-After 60 s on a tool whose deadline is 10 s, then a new call in the group",
    async () => {
      const clock = new ManualClock(0);
      const storm = stormTool(clock, { left: 1, retryAfterMs: 60_000 });
      const r = await rig({ storm: storm.handler }, { maxConcurrentRequests: 4 }, clock);
      const failed = settle(r.broker.invoke(call("storm", "a")));
      await driveAll(r.clock, [failed], 100);
      const outcome = await failed;
      expect(codeOf(outcome)).toBe("RATE_LIMITED");
      expect("error" in outcome && outcome.error).toMatchObject({ attempts: 1, retryAfterMs: 60_000 });
      // It gave up at once instead of sleeping into its deadline.
      expect(r.clock.now()).toBeLessThan(1_000);
      expect(r.limiter.stats("demo").cooldownUntil).toBe(60_000);
      const next = settle(r.broker.invoke(call("storm", "b")));
      await driveAll(r.clock, [next], 1_000);
      expect(codeOf(await next)).toBe("ok");
      expect(storm.hits.map((h) => h.at)).toEqual([0, 60_000]);
      return `RATE_LIMITED after 1 attempt at ${storm.hits[0]?.at}ms, retryAfterMs=60000; next call hit upstream at ${storm.hits[1]?.at}ms`;
    },
  );
});
