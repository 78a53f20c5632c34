/**
 * A call returns before its row is written: `recorded(id)`, `flush()` and `close()` wait for the rows,
 * a row that cannot be written is reported through them, a caller that never yields stays bounded,
 * and a process that exits without waiting still writes them.
 */
import { execFile } from "node:child_process";
import { getEventListeners } from "node:events";
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import type { ContentObject } from "../../../src/governance/audit/content-object.js";
import type { InvocationRecord } from "../../../src/governance/audit/ledger.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import type { InvokeRequest } from "../../../src/governance/broker/broker-types.js";
import type { RateLimitLease } from "../../../src/governance/rate-limit/index.js";
import {
  type RateLimitAcquireOptions,
  RateLimiter,
} from "../../../src/governance/rate-limit/rate-limiter.js";
import { repoRoot } from "../../mcp/server-configs.js";
import { createHarness, type Harness } from "./broker-harness.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-write-behind-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function call(toolId: string, query = "brca1", extra: Partial<InvokeRequest> = {}): InvokeRequest {
  return { sourceId: "demo", toolId, input: { query }, session: "s1", ...extra };
}

/** A ledger whose writes of successful rows fail, as a full disk would. */
class FailingOkRows extends MemoryLedger {
  override append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void> {
    if (record.status === "ok") return Promise.reject(new Error("disk full"));
    return super.append(record, objects);
  }
}

describe("Broker: rows written behind the call", () => {
  test("recorded(id) resolves once the call's complete row is stored, its objects readable", async () => {
    const ledger = new MemoryLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    const outcome = await harness.broker.invoke(call("search"));
    await harness.broker.recorded(outcome.invocationId);
    const row = await ledger.get(outcome.invocationId);
    expect(row).toMatchObject({ status: "ok", attempts: 1, cacheHit: false });
    for (const ref of [row?.requestRef, row?.rawRef, row?.normalizedRef]) {
      expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    expect(await harness.broker.store.getJson(row?.normalizedRef as string)).toEqual(outcome.result);
    // An id with nothing on its way (unknown, or long recorded) resolves at once.
    await expect(harness.broker.recorded("no-such-call")).resolves.toBeUndefined();
  });

  test("a row that cannot be written: recorded() and flush() reject with the ledger's error, once", async () => {
    harness = await createHarness({ ledger: new FailingOkRows() });
    const first = await harness.broker.invoke(call("search", "a"));
    const second = await harness.broker.invoke(call("search", "b"));
    await expect(harness.broker.recorded(first.invocationId)).rejects.toThrow("disk full");
    // The other failure is still held for flush(); reported once, then gone.
    await expect(harness.broker.flush()).rejects.toThrow("disk full");
    await expect(harness.broker.flush()).resolves.toBeUndefined();
    await expect(harness.broker.recorded(second.invocationId)).resolves.toBeUndefined();
  });

  test("close() waits for every row behind", async () => {
    const ledger = new MemoryLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) => harness?.broker.invoke(call("search", `q${i}`))),
    );
    await harness.broker.close();
    const ids = new Set((await ledger.query({ limit: 100 })).map((r) => r.invocationId));
    expect(outcomes.every((o) => o !== undefined && ids.has(o.invocationId))).toBe(true);
  });

  test("a caller that never yields to the event loop keeps at most 1,024 rows behind", async () => {
    const ledger = new MemoryLedger({ maxInlineBytes: 65_536 });
    harness = await createHarness({ ledger });
    const calls = 3_000;
    // Cache hits after the first call: no I/O, so this loop only yields when the broker makes it.
    for (let i = 0; i < calls; i++) await harness.broker.invoke(call("search"));
    const written = (await ledger.query({ limit: calls + 1 })).length;
    expect(written).toBeGreaterThanOrEqual(calls - 1_024);
    await harness.broker.flush();
    const rows = await ledger.query({ limit: calls + 1 });
    expect(rows).toHaveLength(calls);
    expect(rows.filter((r) => r.cacheHit)).toHaveLength(calls - 1);
    // Each hit's row stores the cached object itself: it never depends on another row.
    expect(new Set(rows.map((r) => r.normalizedRef)).size).toBe(1);
  });

  test("a process that exits right after invoke, without flush or close, still writes the rows", async () => {
    const dir = join(scratch, "exit");
    const script = join(scratch, "exit-caller.mts");
    const module = (path: string) => JSON.stringify(pathToFileURL(join(repoRoot, path)).href);
    writeFileSync(
      script,
      `import { createHarness } from ${module("test/governance/broker/broker-harness.ts")};
import { SqliteLedger } from ${module("src/governance/audit/sqlite-ledger.ts")};
const ledger = await SqliteLedger.open(${JSON.stringify(join(dir, "ledger.sqlite"))});
const h = await createHarness({ ledger });
for (let i = 0; i < 20; i++) await h.broker.invoke({ sourceId: "demo", toolId: "search", input: { query: "q" + i }, session: "s1" });
process.exit(0);
`,
    );
    const { stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      cwd: repoRoot,
    });
    expect(stderr).not.toContain("not written");
    const reopened = await SqliteLedger.open(join(dir, "ledger.sqlite"));
    try {
      const rows = await reopened.query();
      expect(rows).toHaveLength(20);
      expect(rows.every((r) => r.status === "ok" && r.normalizedRef !== undefined)).toBe(true);
      const missing = await reopened.objects?.get((rows[19]?.normalizedRef ?? "").slice("sha256:".length));
      expect(missing).toBeDefined();
    } finally {
      await reopened.close();
    }
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
