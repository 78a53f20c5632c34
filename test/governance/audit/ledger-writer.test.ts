/**
 * The one writer of a ledger store: appends of one turn share a commit, each append settles once its
 * row is durable, a commit that fails retryably is tried again (with `again`) within the bound, a batch
 * the store still cannot take goes to the spool (synced, private) and is replayed once the store
 * answers, and what is queued at process exit is committed, or spooled, on the way out. An
 * authorization row held for its call's commit (`hold`) is written with it, at close, or at exit.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, test } from "vitest";
import { GovernanceError } from "../../../src/core/errors.js";
import { jsonObject } from "../../../src/governance/audit/content-object.js";
import type {
  LedgerBatchOptions,
  LedgerWrite,
  LedgerWriteResult,
} from "../../../src/governance/audit/ledger.js";
import { LedgerSpool } from "../../../src/governance/audit/ledger-spool.js";
import { LedgerWriter } from "../../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { repoRoot } from "../../mcp/server-configs.js";
import { ledgerRow as row } from "./ledger-row.js";

const scratch = mkdtempSync(join(tmpdir(), "sciencegate-writer-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const spoolDir = () => join(scratch, `spool-${++dirs}`);

/** A store that records each commit and can be told to fail the next ones. */
class FlakyLedger extends MemoryLedger {
  readonly commits: { size: number; again: boolean }[] = [];
  /** Failures still to come, each thrown by one commit. */
  failures: Error[] = [];
  override appendBatch(
    writes: readonly LedgerWrite[],
    options?: LedgerBatchOptions,
  ): Promise<LedgerWriteResult[]> {
    this.commits.push({ size: writes.length, again: options?.again === true });
    const failure = this.failures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    return super.appendBatch(writes, options);
  }
}

const lost = () => new GovernanceError("UPSTREAM_UNAVAILABLE", "connection lost", { retryable: true });
const quiet = { warn: () => undefined };
const authorization = (id: string) => ({
  id,
  sessionId: "s1",
  sourceId: "pubmed",
  toolId: "search",
  action: "search",
  resource: "pubmed:search",
  decisionSource: "policy_not_dangerous",
  createdAt: "2025-01-01T00:00:00.000Z",
  epoch: 1,
});

describe("LedgerWriter", () => {
  test("appends started in one turn share one commit; each settles once its row is readable", async () => {
    const store = new FlakyLedger({ maxInlineBytes: 1024 });
    const writer = new LedgerWriter(store);
    const object = jsonObject({ result: 1 });
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => writer.append(row(`g-${i}`))),
      writer.append(row("with-object", { normalizedRef: object.ref }), [object]),
      writer.appendAuthorization({
        id: "a-1",
        sessionId: "s1",
        sourceId: "pubmed",
        toolId: "search",
        action: "search",
        resource: "pubmed:search",
        decisionSource: "policy_not_dangerous",
        createdAt: "2025-01-01T00:00:00.000Z",
        epoch: 1,
      }),
    ]);
    expect(store.commits).toEqual([{ size: 22, again: false }]);
    expect(await store.count()).toBe(21);
    expect(await store.objects?.get(object.sha256)).toBeDefined();
    await writer.close();
  });

  test("appends made while a commit runs wait for it and share the next one, in append order", async () => {
    let release: () => void = () => undefined;
    class SlowFirst extends FlakyLedger {
      override async appendBatch(writes: readonly LedgerWrite[], options?: LedgerBatchOptions) {
        if (this.commits.length === 0) await new Promise<void>((resolve) => (release = resolve));
        return super.appendBatch(writes, options);
      }
    }
    const store = new SlowFirst();
    const writer = new LedgerWriter(store);
    const first = writer.append(row("first"));
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 10 }, (_, i) => writer.append(row(`later-${i}`)));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([first, ...later]);
    expect(store.commits.map((c) => c.size)).toEqual([1, 10]);
    expect((await store.query()).map((r) => r.invocationId)).toEqual([
      "first",
      ...Array.from({ length: 10 }, (_, i) => `later-${i}`),
    ]);
    await writer.close();
  });

  test("a caller appending in a loop lets timers and I/O run between commits", async () => {
    const writer = new LedgerWriter(new MemoryLedger());
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      for (let i = 0; i < 2_000 && ticks === 0; i++) await writer.append(row(`loop-${i}`));
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
      await writer.close();
    }
  });

  test("a commit that fails retryably is tried again, flagged `again`, and the row is stored once", async () => {
    const store = new FlakyLedger();
    store.failures = [lost(), lost()];
    const writer = new LedgerWriter(store);
    await writer.append(row("retried"));
    expect(store.commits).toEqual([
      { size: 1, again: false },
      { size: 1, again: true },
      { size: 1, again: true },
    ]);
    expect(await store.query()).toEqual([row("retried")]);
    await writer.close();
  });

  test("a failure that is not retryable, or outlasts the bound, rejects the batch's appends (no spool)", async () => {
    const store = new FlakyLedger();
    store.failures = [new GovernanceError("UPSTREAM_UNAVAILABLE", "closed")];
    const writer = new LedgerWriter(store, { retryWithinMs: 5_000 });
    await expect(writer.append(row("closed"))).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: false,
    });
    expect(store.commits).toHaveLength(1);

    store.failures = Array.from({ length: 100 }, lost);
    const bounded = new LedgerWriter(store, { retryWithinMs: 50 });
    await expect(bounded.append(row("down"))).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: true,
      message: expect.stringContaining("connection lost"),
    });
    expect(await store.count()).toBe(0);
    await Promise.all([writer.close(), bounded.close()]);
  });

  test("a row refused on its own rejects alone; its batch's other rows are stored", async () => {
    const store = new MemoryLedger();
    const writer = new LedgerWriter(store);
    await writer.append(row("taken", { threadId: "t", toolCallId: "c" }));
    const settled = await Promise.allSettled([
      writer.append(row("ok-1")),
      writer.append(row("twin", { threadId: "t", toolCallId: "c" })),
      writer.append(row("ok-2")),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(settled[1]).toMatchObject({
      reason: { code: "DUPLICATE_ID", data: { existingInvocationId: "taken" } },
    });
    await writer.close();
  });

  test("a store that stays down: appends settle once their batch is synced to the spool, then replay once it answers", async () => {
    const dir = spoolDir();
    const store = new FlakyLedger({ maxInlineBytes: 1024 });
    store.failures = Array.from({ length: 1_000 }, lost);
    const warnings: string[] = [];
    const writer = new LedgerWriter(store, {
      spool: new LedgerSpool(dir),
      retryWithinMs: 30,
      warn: (line) => warnings.push(line),
    });
    const object = jsonObject({ result: "spooled" });
    await writer.append(row("spooled-1", { sessionId: "s\u0000nul", normalizedRef: object.ref }), [object]);
    const attemptsBefore = store.commits.length;
    // While the store is down, the next batch tries it once and goes to the spool: an authorization's
    // object travels with it as an invocation's does.
    const question = jsonObject({ question: "spooled" });
    await Promise.all([
      writer.append(row("spooled-2")),
      writer.appendAuthorization(
        {
          id: "spooled-auth",
          sessionId: "s",
          sourceId: "up",
          toolId: "t",
          action: "elicitation",
          resource: question.ref,
          decisionSource: "upstream_asked",
          createdAt: new Date(0).toISOString(),
          epoch: 0,
        },
        [question],
      ),
    ]);
    expect(store.commits.length).toBe(attemptsBefore + 1);
    expect(await store.count()).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(dir);
    // Private to the user, like the rest of the data directory.
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toHaveLength(2);
    for (const file of files) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);

    store.failures = [];
    expect(await writer.replaySpool()).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    expect((await store.query()).map((r) => r.invocationId)).toEqual(["spooled-1", "spooled-2"]);
    expect((await store.get("spooled-1"))?.sessionId).toBe("s\u0000nul");
    expect(await store.objects?.get(object.sha256)).toBeDefined();
    expect((await store.getAuthorization("spooled-auth"))?.resource).toBe(question.ref);
    expect(await store.objects?.get(question.sha256)).toBeDefined();
    // The store answers again: the next append commits at once.
    await writer.append(row("after"));
    expect(await store.count()).toBe(3);
    await writer.close();
  });

  test("another writer on the same spool replays what an earlier process left, each row once", async () => {
    const dir = spoolDir();
    const spool = new LedgerSpool(dir);
    spool.write([{ kind: "invocation", record: row("left-1"), objects: [] }]);
    spool.write([
      { kind: "invocation", record: row("left-1"), objects: [] },
      { kind: "invocation", record: row("left-2"), objects: [] },
    ]);
    const store = new MemoryLedger();
    const writer = new LedgerWriter(store, { spool, ...quiet });
    expect(await writer.replaySpool()).toBe(0);
    expect((await store.query()).map((r) => r.invocationId)).toEqual(["left-1", "left-2"]);
    await writer.close();
  });

  test("a spooled batch the store refuses, or a damaged file, is set aside and named, never replayed twice", async () => {
    const dir = spoolDir();
    const spool = new LedgerSpool(dir);
    const store = new MemoryLedger();
    const seed = new LedgerWriter(store);
    await seed.append(row("first", { threadId: "t", toolCallId: "c" }));
    spool.write([
      { kind: "invocation", record: row("second", { threadId: "t", toolCallId: "c" }), objects: [] },
    ]);
    writeFileSync(join(dir, "0000000000000000-damaged.batch.json"), "{not json");
    const warnings: string[] = [];
    const writer = new LedgerWriter(store, { spool, warn: (line) => warnings.push(line) });
    expect(await writer.replaySpool()).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(
      [
        expect.stringMatching(/damaged\.batch\.json\.refused$/),
        expect.stringMatching(/\.batch\.json\.refused$/),
      ].sort(),
    );
    expect(warnings.join("\n")).toMatch(/cannot be read/);
    expect(warnings.join("\n")).toMatch(/refused 1 spooled row/);
    expect(await store.count()).toBe(1);
    await Promise.all([seed.close(), writer.close()]);
  });

  test("a held authorization row waits for its release, then shares the next row's commit, ahead of it", async () => {
    const store = new FlakyLedger();
    const writer = new LedgerWriter(store);
    const held = writer.hold(authorization("held-1"));
    await writer.append(row("before"));
    expect(await store.listAuthorizations()).toEqual([]);
    const released = held.release();
    expect(held.release()).toBe(released);
    await Promise.all([released, writer.append(row("after", { authorizationId: "held-1" }))]);
    expect(store.commits.map((c) => c.size)).toEqual([1, 2]);
    expect((await store.listAuthorizations()).map((a) => a.id)).toEqual(["held-1"]);
    await writer.close();
    expect(store.commits.map((c) => c.size)).toEqual([1, 2]);
  });

  test("a held row never released is written when the writer closes; a malformed one is refused at hold", async () => {
    const store = new MemoryLedger();
    const writer = new LedgerWriter(store);
    const held = writer.hold(authorization("orphan"));
    expect(() => writer.hold({ ...authorization("bad"), epoch: -1 })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    await writer.close();
    expect((await store.listAuthorizations()).map((a) => a.id)).toEqual(["orphan"]);
    await held.release();
    expect(() => writer.hold(authorization("late"))).toThrow(
      expect.objectContaining({ code: "UPSTREAM_UNAVAILABLE" }),
    );
  });

  test("after close(), appends are refused with UPSTREAM_UNAVAILABLE; close waits for what was queued", async () => {
    const store = new MemoryLedger();
    const writer = new LedgerWriter(store);
    const queued = writer.append(row("queued"));
    await writer.close();
    await queued;
    expect(await store.count()).toBe(1);
    await expect(writer.append(row("late"))).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    await writer.close();
  });

  test("rows queued at process exit that the store cannot take go to the spool, and are replayed later", async () => {
    const dir = spoolDir();
    const script = join(scratch, `exit-${dirs}.mts`);
    const audit = JSON.stringify(pathToFileURL(join(repoRoot, "src/governance/audit/index.ts")).href);
    const rows = JSON.stringify(pathToFileURL(join(repoRoot, "test/governance/audit/ledger-row.ts")).href);
    writeFileSync(
      script,
      `import { LedgerSpool, LedgerWriter, MemoryLedger } from ${audit};
import { ledgerRow } from ${rows};
class Down extends MemoryLedger {
  appendBatchNow() { throw new Error("the database is down"); }
}
const writer = new LedgerWriter(new Down(), { spool: new LedgerSpool(${JSON.stringify(dir)}) });
for (let i = 0; i < 30; i++) void writer.append(ledgerRow("exit-" + i)).catch(() => {});
writer.hold({ id: "held-at-exit", sessionId: "s1", sourceId: "pubmed", toolId: "search", action: "search",
  resource: "pubmed:search", decisionSource: "policy_not_dangerous", createdAt: "2025-01-01T00:00:00.000Z", epoch: 1 });
process.exit(0);
`,
    );
    const { stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      cwd: repoRoot,
    });
    // The held authorization row (its call may have run) is kept with them.
    expect(stderr).toContain(`31 ledger row(s) kept in ${dir} at exit (the database is down)`);
    const store = new MemoryLedger();
    const writer = new LedgerWriter(store, { spool: new LedgerSpool(dir), ...quiet });
    expect(await writer.replaySpool()).toBe(0);
    expect(await store.count()).toBe(30);
    expect((await store.listAuthorizations()).map((a) => a.id)).toEqual(["held-at-exit"]);
    await writer.close();
  });
});
