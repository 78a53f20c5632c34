/**
 * A call returns only once its one row is durable: readable at once by any reader, its objects with
 * it; a row that cannot be written withholds the result; calls ending together share commits, and a
 * caller that never yields to the event loop still lets it run.
 */
import { getEventListeners } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { GovernanceError } from "../../../src/core/errors.js";
import type {
  LedgerBatchOptions,
  LedgerWrite,
  LedgerWriteResult,
} from "../../../src/governance/audit/ledger.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import type { InvokeRequest } from "../../../src/governance/broker/broker-types.js";
import type { RateLimitLease } from "../../../src/governance/rate-limit/index.js";
import {
  type RateLimitAcquireOptions,
  RateLimiter,
} from "../../../src/governance/rate-limit/rate-limiter.js";
import { createHarness, type Harness } from "./broker-harness.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-recording-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function call(toolId: string, query = "brca1", extra: Partial<InvokeRequest> = {}): InvokeRequest {
  return { sourceId: "demo", toolId, input: { query }, sessionId: "s1", ...extra };
}

/** A store that counts its commits. */
class CountingLedger extends MemoryLedger {
  readonly batches: number[] = [];
  override appendBatch(
    writes: readonly LedgerWrite[],
    options?: LedgerBatchOptions,
  ): Promise<LedgerWriteResult[]> {
    this.batches.push(writes.length);
    return super.appendBatch(writes, options);
  }
}

/** A store whose commits of successful rows fail, as a full disk would. */
class FailingOkRows extends MemoryLedger {
  override appendBatch(
    writes: readonly LedgerWrite[],
    options?: LedgerBatchOptions,
  ): Promise<LedgerWriteResult[]> {
    if (writes.some((w) => w.kind === "invocation" && w.record.status === "ok")) {
      return Promise.reject(new GovernanceError("UPSTREAM_UNAVAILABLE", "disk full"));
    }
    return super.appendBatch(writes, options);
  }
}

describe("Broker: a call returns once its row is durable", () => {
  test.each([
    ["MemoryLedger", () => new MemoryLedger({ maxInlineBytes: 65_536 })],
    ["SqliteLedger", () => SqliteLedger.open(join(scratch, `ledger-${Math.random()}.sqlite`))],
  ])(
    "on %s, the row and its objects are readable the moment invoke returns (50 of 50)",
    async (_name, open) => {
      const ledger = await open();
      harness = await createHarness({ ledger });
      for (let i = 0; i < 50; i++) {
        const outcome = await harness.broker.invoke(
          call("search", `q${i}`, { threadId: "t", toolCallId: `c${i}` }),
        );
        // No waiting of any kind between the answer and the read.
        const row = await ledger.get(outcome.invocationId);
        expect(row, `call ${i}`).toMatchObject({ status: "ok", attempts: 1, cacheHit: false });
        expect(await ledger.findByCall("t", `c${i}`)).toEqual(row);
        expect(await harness.broker.store.getJson(row?.normalizedRef as string)).toEqual(outcome.result);
        expect(await harness.broker.store.has(row?.rawRef as string)).toBe(true);
      }
    },
  );

  test("a row that cannot be written: the call ran, but invoke throws and hands back no result", async () => {
    harness = await createHarness({ ledger: new FailingOkRows() });
    const error = await harness.broker.invoke(call("search", "a")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", data: { invocationId: expect.any(String) } });
    expect((error as Error).message).toContain("its result is withheld");
    expect((error as Error).message).toContain("disk full");
    expect(harness.state.calls.search).toBe(1);
    expect(await harness.ledger.query()).toEqual([]);
  });

  test("calls ending together share commits: 50 concurrent calls, far fewer commits", async () => {
    const ledger = new CountingLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) => harness?.broker.invoke(call("search", `q${i}`))),
    );
    const rows = await ledger.query({ limit: 100 });
    expect(new Set(rows.map((r) => r.invocationId))).toEqual(new Set(outcomes.map((o) => o?.invocationId)));
    expect(ledger.batches.reduce((a, b) => a + b, 0)).toBe(50);
    expect(ledger.batches.length).toBeLessThan(25);
  });

  test("a caller that never yields (a loop of cache hits) lets timers run, and every row lands", async () => {
    const ledger = new MemoryLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const calls = 3_000;
      for (let i = 0; i < calls; i++) await harness.broker.invoke(call("search"));
      expect(ticks).toBeGreaterThan(0);
      const rows = await ledger.query({ limit: calls + 1 });
      expect(rows).toHaveLength(calls);
      expect(rows.filter((r) => r.cacheHit)).toHaveLength(calls - 1);
      // Each hit's row stores the cached object itself: it never depends on another row.
      expect(new Set(rows.map((r) => r.normalizedRef)).size).toBe(1);
    } finally {
      clearInterval(timer);
    }
  });

  test("close() after the calls returned has nothing left to wait for: every row is in", async () => {
    const ledger = new MemoryLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => harness?.broker.invoke(call("search", `q${i}`))),
    );
    const ids = new Set((await ledger.query({ limit: 100 })).map((r) => r.invocationId));
    expect(outcomes.every((o) => o !== undefined && ids.has(o.invocationId))).toBe(true);
  });
});

describe("Broker: calls without a signal of their own", () => {
  test("share one signal and leave no listener on it, one by one or 200 at once", async () => {
    const seen = new Set<AbortSignal | undefined>();
    class SignalSpy extends RateLimiter {
      override acquire(group: string, options?: RateLimitAcquireOptions): Promise<RateLimitLease> {
        seen.add(options?.signal);
        return super.acquire(group, options);
      }
    }
    harness = await createHarness({ limiter: new SignalSpy({ groups: {} }) });
    for (let i = 0; i < 200; i++) await harness.broker.invoke(call("write", `q${i}`));
    await Promise.all(Array.from({ length: 200 }, (_, i) => harness?.broker.invoke(call("write", `c${i}`))));
    // One signal for all 400 calls (no controller per call), with nothing left listening on it.
    expect(seen.size).toBe(1);
    const [shared] = seen;
    expect(shared).toBeInstanceOf(AbortSignal);
    expect(getEventListeners(shared as AbortSignal, "abort")).toHaveLength(0);
  });
});
