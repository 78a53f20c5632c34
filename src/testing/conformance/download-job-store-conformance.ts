/**
 * The behaviour every `DownloadJobStore` must show. Another backend (Postgres for a multi-replica
 * deployment) runs this suite with its own factory to prove it can replace the SQLite store.
 */
import { describe, expect, test } from "vitest";
import type { DownloadJob, DownloadJobStatus, DownloadJobStore } from "../../artifacts/index.js";
import { ACTIVE_DOWNLOAD_STATES, callJobId } from "../../artifacts/index.js";
import { closingAfterEach } from "./opened-stores.js";

/** Every status, typed as a record so that a new status fails to compile until it is listed here. */
const STATUSES = Object.keys({
  queued: true,
  running: true,
  retrying: true,
  verifying: true,
  completed: true,
  failed: true,
  cancelled: true,
} satisfies Record<DownloadJobStatus, true>) as DownloadJobStatus[];

const T0 = Date.UTC(2026, 0, 1);
let counter = 0;
function job(overrides: Partial<DownloadJob> = {}): DownloadJob {
  counter += 1;
  return {
    jobId: `job-${counter}`,
    planId: `plan-${counter}`,
    mcpInvocationId: "inv-1",
    candidateId: `c${counter}`,
    sourceId: "arxiv",
    sourceRecordId: `2401.${String(counter).padStart(5, "0")}`,
    url: `https://arxiv.org/pdf/2401.${counter}`,
    finalPath: `/data/workspace/downloads/arxiv/${counter}.pdf`,
    destinationPath: `downloads/arxiv/${counter}.pdf`,
    sessionId: "s1",
    status: "queued",
    bytesDownloaded: 0,
    attempts: 0,
    warnings: [],
    createdAt: T0 + counter * 1000,
    updatedAt: T0 + counter * 1000,
    ...overrides,
  };
}

/** A job with every optional field set. */
function fullJob(overrides: Partial<DownloadJob> = {}): DownloadJob {
  return job({
    threadId: "thread-1",
    toolCallId: "call_1",
    status: "failed",
    actualChecksum: `sha256:${"ab".repeat(32)}`,
    error: { code: "TIMEOUT", message: "The transfer stalled.", retryable: true },
    warnings: ["license taken from the result", "no size announced"],
    bytesDownloaded: 4096,
    attempts: 3,
    ...overrides,
  });
}

const keysOf = (value: object | undefined) => Object.keys(value ?? {}).sort();
/** The keys of a job without optional fields (`job()` sets only the required ones). */
const REQUIRED_KEYS = keysOf(job());

/** Options of `describeDownloadJobStoreConformance`. */
export interface DownloadJobStoreConformanceOptions {
  /**
   * Closes the store and opens the same storage again (a process restart). Given only for a durable
   * store; it adds the restart case. @default none: the restart case is not registered
   */
  reopen?: (store: DownloadJobStore) => Promise<DownloadJobStore> | DownloadJobStore;
}

/**
 * Registers a vitest suite that checks a `DownloadJobStore` implementation.
 * @param name suite title, e.g. `"SqliteDownloadJobStore"`
 * @param factory returns a fresh, empty store for each test; the suite closes it afterwards
 * @param options `reopen` for a durable store
 * @example
 * describeDownloadJobStoreConformance("MemoryDownloadJobStore", () => new MemoryDownloadJobStore());
 */
export function describeDownloadJobStoreConformance(
  name: string,
  factory: () => Promise<DownloadJobStore> | DownloadJobStore,
  options: DownloadJobStoreConformanceOptions = {},
): void {
  describe(`${name} (DownloadJobStore conformance)`, () => {
    const open = closingAfterEach(factory);

    test("a created job round-trips exactly; absent optional fields stay absent", async () => {
      const store = await open();
      const j = job();
      await store.create(j);
      const got = await store.get(j.jobId);
      expect(got).toStrictEqual(j);
      expect(keysOf(got)).toEqual(REQUIRED_KEYS);
      expect(await store.list()).toStrictEqual([j]);
    });

    test.each([
      ["threadId", { threadId: "thread-7" }],
      ["toolCallId", { toolCallId: "call_7" }],
      ["actualChecksum", { actualChecksum: `sha256:${"0f".repeat(32)}` }],
      ["error", { error: { code: "CANCELLED", message: "Cancelled.", retryable: false } }],
      ["warnings", { warnings: ["one", "two", ""] }],
    ] satisfies Array<[string, Partial<DownloadJob>]>)(
      "optional field %s round-trips alone, nothing else appears",
      async (field, set) => {
        const store = await open();
        const j = job(set);
        await store.create(j);
        const got = await store.get(j.jobId);
        expect(got).toStrictEqual(j);
        expect(keysOf(got)).toEqual([...new Set([...REQUIRED_KEYS, field])].sort());
      },
    );

    test("a job with every optional field round-trips through get and list", async () => {
      const store = await open();
      const j = fullJob();
      await store.create(j);
      expect(await store.get(j.jobId)).toStrictEqual(j);
      expect(await store.list()).toStrictEqual([j]);
    });

    test.each(STATUSES)("status %s round-trips through create and update", async (status) => {
      const store = await open();
      const created = job({ status });
      await store.create(created);
      expect((await store.get(created.jobId))?.status).toBe(status);
      const other = job();
      await store.create(other);
      await store.update({ ...other, status });
      expect((await store.list()).map((j) => j.status)).toEqual([status, status]);
    });

    test("creating a known id is DUPLICATE_ID and leaves the stored job as it was", async () => {
      const store = await open();
      const j = job();
      await store.create(j);
      await expect(
        store.create({ ...j, status: "running", url: "https://evil.example/x" }),
      ).rejects.toMatchObject({ code: "DUPLICATE_ID" });
      expect(await store.get(j.jobId)).toStrictEqual(j);
      expect(await store.list()).toHaveLength(1);
    });

    test("two concurrent creates of one call's job: exactly one wins (two replicas racing)", async () => {
      const store = await open();
      const id = callJobId("thread-1", "call_1");
      const results = await Promise.allSettled([
        store.create(job({ jobId: id, planId: "plan-a" })),
        store.create(job({ jobId: id, planId: "plan-b" })),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const loser = results.find((r) => r.status === "rejected");
      expect(loser?.status === "rejected" && loser.reason).toMatchObject({ code: "DUPLICATE_ID" });
      const winner = results[0]?.status === "fulfilled" ? "plan-a" : "plan-b";
      expect((await store.get(id))?.planId).toBe(winner);
      expect(await store.list()).toHaveLength(1);
    });

    test("updating an unknown id is UNKNOWN_ID and creates nothing", async () => {
      const store = await open();
      const j = job();
      await expect(store.update(j)).rejects.toMatchObject({ code: "UNKNOWN_ID" });
      expect(await store.get(j.jobId)).toBeUndefined();
      expect(await store.list()).toEqual([]);
    });

    test("update replaces the whole job: dropped fields vanish, its place in the list stays", async () => {
      const store = await open();
      const [first, second] = [fullJob(), job()];
      await store.create(first);
      await store.create(second);
      // As a retry does: the error and checksum of the failed run are dropped, the job is queued again.
      const { error: _error, actualChecksum: _checksum, ...rest } = first;
      const requeued: DownloadJob = {
        ...rest,
        status: "queued",
        warnings: [],
        updatedAt: first.updatedAt + 5,
      };
      await store.update(requeued);
      const got = await store.get(first.jobId);
      expect(got).toStrictEqual(requeued);
      expect(got && "error" in got).toBe(false);
      expect(got && "actualChecksum" in got).toBe(false);
      expect((await store.list()).map((j) => j.jobId)).toEqual([first.jobId, second.jobId]);
      expect(await store.get(second.jobId)).toStrictEqual(second);
    });

    test("update without a condition writes whatever the stored status, and says so", async () => {
      const store = await open();
      const j = job({ status: "cancelled" });
      await store.create(j);
      expect(await store.update({ ...j, status: "queued", updatedAt: j.updatedAt + 1 })).toBe(true);
      expect(await store.get(j.jobId)).toStrictEqual({ ...j, status: "queued", updatedAt: j.updatedAt + 1 });
    });

    test.each(STATUSES)(
      "update with ifStatus over a stored %s job writes only when that status is listed",
      async (status) => {
        const store = await open();
        const stored = fullJob({ status });
        await store.create(stored);
        const progress: DownloadJob = { ...stored, status: "running", bytesDownloaded: 8192, updatedAt: 9 };
        const expected = ACTIVE_DOWNLOAD_STATES.includes(status);
        expect(await store.update(progress, { ifStatus: ACTIVE_DOWNLOAD_STATES })).toBe(expected);
        expect(await store.get(stored.jobId)).toStrictEqual(expected ? progress : stored);
        // Listing exactly the stored status always writes; listing none never does.
        const again: DownloadJob = { ...stored, bytesDownloaded: 1 };
        expect(await store.update(again, { ifStatus: [] })).toBe(false);
        const now = expected ? progress : stored;
        expect(await store.update(again, { ifStatus: [now.status] })).toBe(true);
        expect(await store.get(stored.jobId)).toStrictEqual(again);
      },
    );

    test("a refused conditional update changes nothing: not the body, the status or the place in the list", async () => {
      const store = await open();
      const [first, second] = [job({ status: "running" }), job()];
      await store.create(first);
      await store.create(second);
      // Another process cancels the job; the run's next progress write must not bring it back.
      const cancelled: DownloadJob = {
        ...first,
        status: "cancelled",
        error: { code: "CANCELLED", message: "Cancelled with sciencegate jobs cancel.", retryable: false },
      };
      expect(await store.update(cancelled, { ifStatus: ACTIVE_DOWNLOAD_STATES })).toBe(true);
      const late = { ...first, bytesDownloaded: 4096, updatedAt: first.updatedAt + 7 };
      expect(await store.update(late, { ifStatus: ACTIVE_DOWNLOAD_STATES })).toBe(false);
      expect(await store.get(first.jobId)).toStrictEqual(cancelled);
      expect(await store.list()).toStrictEqual([cancelled, second]);
    });

    test("a conditional update of an unknown id is UNKNOWN_ID and creates nothing", async () => {
      const store = await open();
      const j = job();
      await expect(store.update(j, { ifStatus: ACTIVE_DOWNLOAD_STATES })).rejects.toMatchObject({
        code: "UNKNOWN_ID",
      });
      await expect(store.update(j, { ifStatus: [] })).rejects.toMatchObject({ code: "UNKNOWN_ID" });
      expect(await store.list()).toEqual([]);
    });

    test("writers racing from one expected status: exactly one wins (a cancel against a run's end)", async () => {
      const store = await open();
      const jobs = Array.from({ length: 20 }, () => job({ status: "verifying" }));
      for (const j of jobs) await store.create(j);
      const outcomes = await Promise.all(
        jobs.map((j) =>
          Promise.all(
            (["cancelled", "completed", "failed"] as const).map((status) =>
              store.update({ ...j, status }, { ifStatus: ["verifying"] }).then((won) => ({ status, won })),
            ),
          ),
        ),
      );
      for (const [i, races] of outcomes.entries()) {
        const winners = races.filter((race) => race.won);
        expect(winners).toHaveLength(1);
        expect((await store.get(jobs[i]?.jobId ?? ""))?.status).toBe(winners[0]?.status);
      }
    });

    test("get of an unknown id is undefined, even for a prefix, extension or other case of a known one", async () => {
      const store = await open();
      const id = callJobId("thread-1", "call_1");
      await store.create(job({ jobId: id }));
      await store.create(job({ jobId: "job-x1" }));
      for (const unknown of [
        "",
        "nope",
        id.toUpperCase(),
        id.slice(0, -1),
        `${id}0`,
        "job-x",
        "job-x10",
        "%",
      ]) {
        expect(await store.get(unknown)).toBeUndefined();
      }
    });

    test("list is oldest first by createdAt, ties in creation order; an empty store lists nothing", async () => {
      const store = await open();
      expect(await store.list()).toEqual([]);
      const late = job({ jobId: "late", createdAt: T0 + 3000 });
      const earlyA = job({ jobId: "early-a", createdAt: T0 + 1000 });
      const middle = job({ jobId: "middle", createdAt: T0 + 2000 });
      const earlyB = job({ jobId: "early-b", createdAt: T0 + 1000 });
      for (const j of [late, earlyA, middle, earlyB]) await store.create(j);
      // A later update (a newer updatedAt) does not move a job.
      await store.update({ ...earlyA, status: "completed", updatedAt: T0 + 9000 });
      expect((await store.list()).map((j) => j.jobId)).toEqual(["early-a", "early-b", "middle", "late"]);
    });

    test("list({ mcpInvocationId }) is that invocation's jobs only, oldest first, updates included", async () => {
      const store = await open();
      const late = job({ jobId: "inv-a-late", mcpInvocationId: "inv-a", createdAt: T0 + 3000 });
      const other = job({ jobId: "inv-b-1", mcpInvocationId: "inv-b", createdAt: T0 + 1000 });
      const early = job({ jobId: "inv-a-early", mcpInvocationId: "inv-a", createdAt: T0 + 2000 });
      const prefix = job({ jobId: "inv-a2-1", mcpInvocationId: "inv-a2", createdAt: T0 + 500 });
      for (const j of [late, other, early, prefix]) await store.create(j);
      await store.update({ ...late, status: "completed", bytesDownloaded: 7, updatedAt: T0 + 9000 });
      await store.update({ ...early, status: "failed" }, { ifStatus: ["queued"] });
      const listed = await store.list({ mcpInvocationId: "inv-a" });
      expect(listed.map((j) => [j.jobId, j.status])).toEqual([
        ["inv-a-early", "failed"],
        ["inv-a-late", "completed"],
      ]);
      expect((await store.list({ mcpInvocationId: "inv-b" })).map((j) => j.jobId)).toEqual(["inv-b-1"]);
      expect(await store.list({ mcpInvocationId: "INV-A" })).toEqual([]);
      expect(await store.list({ mcpInvocationId: "inv-" })).toEqual([]);
      expect(await store.list({ mcpInvocationId: "x' OR '1'='1" })).toEqual([]);
      expect((await store.list({})).map((j) => j.jobId)).toEqual([
        "inv-a2-1",
        "inv-b-1",
        "inv-a-early",
        "inv-a-late",
      ]);
    });

    test("a graph tool call's job is found by its call id, and only that call's", async () => {
      const store = await open();
      const calls = [
        ["thread-1", "call_a"],
        ["thread-1", "call_b"],
        ["thread-2", "call_a"],
      ] as const;
      const jobs = calls.map(([threadId, toolCallId]) =>
        job({ jobId: callJobId(threadId, toolCallId), threadId, toolCallId }),
      );
      for (const j of jobs) await store.create(j);
      for (const [i, [threadId, toolCallId]] of calls.entries()) {
        expect(await store.get(callJobId(threadId, toolCallId))).toStrictEqual(jobs[i]);
      }
      expect(await store.get(callJobId("thread-2", "call_b"))).toBeUndefined();
    });

    test("returned jobs are copies: changing them changes nothing stored", async () => {
      const store = await open();
      const j = fullJob();
      await store.create(j);
      const saved = structuredClone(j);
      const got = await store.get(j.jobId);
      const [listed] = await store.list();
      for (const copy of [got, listed]) {
        if (!copy?.error) throw new Error("the job came back without its error");
        copy.status = "completed";
        copy.warnings.push("injected");
        copy.error.message = "changed";
        copy.bytesDownloaded = 1;
      }
      expect(await store.get(j.jobId)).toStrictEqual(saved);
      expect(await store.list()).toStrictEqual([saved]);
    });

    test("the store keeps its own copy: changing a saved object afterwards changes nothing", async () => {
      const store = await open();
      const j = fullJob();
      const saved = structuredClone(j);
      await store.create(j);
      j.warnings.push("late");
      j.bytesDownloaded = 99;
      expect(await store.get(j.jobId)).toStrictEqual(saved);
      // A download run keeps counting bytes on the object it just saved.
      const running: DownloadJob = { ...saved, status: "running", warnings: [...saved.warnings] };
      await store.update(running);
      const afterUpdate = structuredClone(running);
      running.bytesDownloaded = 12345;
      running.warnings.length = 0;
      expect(await store.get(j.jobId)).toStrictEqual(afterUpdate);
    });

    test("unicode and long strings round-trip exactly", async () => {
      const store = await open();
      const j = fullJob({
        jobId: "jöb-🧬-論文",
        sourceRecordId: "10.1000/ÄÖÜ-ß_ç",
        destinationPath: "论文/Ünïcödé e\u0301 🧬 \u200fעברית ‮rtl.pdf",
        finalPath: `/data/${"深".repeat(300)}/${"x".repeat(2000)}.pdf`,
        url: `https://arxiv.org/pdf/2401.00001?q=${"a%20b&c=d".repeat(1000)}`,
        sessionId: "セッション\t1",
        threadId: "thread \"quoted\" 'single' \\back\\slash",
        toolCallId: "call\nwith\r\nnewlines",
        warnings: ["emoji 👩‍🔬 ZWJ", 'json-ish {"a":[1,2]} {{x}} %s ?', "surrogate pair 𝔘𝔫𝔦", "\u00a0nbsp"],
        error: {
          code: "UPSTREAM_UNAVAILABLE",
          message: `Ω ${"long message ".repeat(8000)}`,
          retryable: false,
        },
      });
      await store.create(j);
      expect(await store.get(j.jobId)).toStrictEqual(j);
      expect(await store.list()).toStrictEqual([j]);
    });

    test("large numbers round-trip exactly (files over 4 GiB, many attempts)", async () => {
      const store = await open();
      const j = job({ bytesDownloaded: 6 * 2 ** 30 + 7, attempts: 1_000 });
      await store.create(j);
      await store.update({ ...j, bytesDownloaded: Number.MAX_SAFE_INTEGER, updatedAt: 8.64e15 });
      expect(await store.get(j.jobId)).toStrictEqual({
        ...j,
        bytesDownloaded: Number.MAX_SAFE_INTEGER,
        updatedAt: 8.64e15,
      });
    });

    test("many jobs created and updated concurrently: each kept apart, listed in order", async () => {
      const store = await open();
      const jobs = Array.from({ length: 200 }, (_, i) => job({ createdAt: T0 + (199 - i) * 10 }));
      await Promise.all(jobs.map((j) => store.create(j)));
      const updated = jobs.map((j, i) =>
        i % 2 === 0
          ? { ...j, status: "completed" as const, bytesDownloaded: i * 100, updatedAt: j.updatedAt + i }
          : j,
      );
      await Promise.all(updated.filter((_, i) => i % 2 === 0).map((j) => store.update(j)));
      expect(await store.list()).toStrictEqual([...updated].reverse());
      const got = await Promise.all(jobs.map((j) => store.get(j.jobId)));
      expect(got).toStrictEqual(updated);
    });

    test("close is idempotent and later calls reject with UPSTREAM_UNAVAILABLE", async () => {
      const store = await open();
      await store.create(job());
      await store.close();
      await store.close();
      for (const call of [
        () => store.list(),
        () => store.get("job-1"),
        () => store.create(job()),
        () => store.update(job()),
        () => store.update(job(), { ifStatus: ACTIVE_DOWNLOAD_STATES }),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      }
    });

    const { reopen } = options;
    if (reopen) {
      test("jobs survive a restart: every field, the order, and a mid-way job found by its call id", async () => {
        const store = await open();
        const midway = job({
          jobId: callJobId("thread-1", "call_1"),
          threadId: "thread-1",
          toolCallId: "call_1",
          status: "running",
          bytesDownloaded: 2048,
          attempts: 1,
          createdAt: T0 + 2,
        });
        const done = fullJob({ status: "completed", createdAt: T0 + 1 });
        const others = STATUSES.map((status, i) => job({ status, createdAt: T0 + 10 + i }));
        for (const j of [midway, done, ...others]) await store.create(j);
        await store.update({ ...midway, bytesDownloaded: 3072, updatedAt: midway.updatedAt + 1 });
        const expected = [
          done,
          { ...midway, bytesDownloaded: 3072, updatedAt: midway.updatedAt + 1 },
          ...others,
        ];
        const again = await open(() => reopen(store));
        expect(await again.list()).toStrictEqual(expected);
        expect(await again.get(callJobId("thread-1", "call_1"))).toStrictEqual(expected[1]);
        await expect(again.create(done)).rejects.toMatchObject({ code: "DUPLICATE_ID" });
      });
    }
  });
}
