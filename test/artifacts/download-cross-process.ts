/**
 * What another process sees of, and does to, a running download through the job store alone: the
 * real `DownloadManager` downloads from a loopback publisher that holds the body after its first part,
 * into one store instance, while a second instance of the same storage (another `SqliteDownloadJobStore`
 * on the file, or another pool on the PostgreSQL database) reads and cancels, as `sciencegate jobs` or a
 * console in another process does. The manual clock drives the progress ticks.
 */

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import {
  cancelStoredJob,
  type DownloadJob,
  type DownloadJobStore,
  type DownloadJobUpdateOptions,
} from "../../src/artifacts/download-job-store.js";
import type { DownloadProgress, DownloadResult } from "../../src/artifacts/download-types.js";
import { GovernanceError } from "../../src/core/errors.js";
import { createBench, makeCandidate, PDF } from "./download-harness.js";
import { type PacedPublisher, startPacedPublisher } from "./paced-publisher.js";

/** The two store instances of one storage: the manager's, and another process's. */
export interface StorePair {
  run: DownloadJobStore;
  other: DownloadJobStore;
}

const PATH = "/pdf/2401.00001v1";
/** The graph tool call that downloads the candidate. */
const CALL = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "call-1",
};
const PARTS = 4;
const FIRST_PART = Math.ceil(PDF.length / PARTS);
const TICK_MS = 1000;

/**
 * The manager's store, with a way to act as another process at a chosen moment of the run: right
 * after one of its reads or writes. Every call goes to the real store underneath.
 */
export class InterleavingJobStore implements DownloadJobStore {
  /** Every write the run made: status, bytes and whether it was written. */
  readonly writes: { status: DownloadJob["status"]; bytes: number; written: boolean }[] = [];
  /** Reads so far. */
  reads = 0;
  /** Runs once, after the next `get`. */
  afterNextGet: (() => Promise<void>) | undefined;
  /** Runs once, after the first written update to this status. */
  afterWrite: { status: DownloadJob["status"]; run: () => Promise<void> } | undefined;

  constructor(readonly inner: DownloadJobStore) {}

  create(job: DownloadJob): Promise<void> {
    return this.inner.create(job);
  }

  async update(job: DownloadJob, options?: DownloadJobUpdateOptions): Promise<boolean> {
    const written = await this.inner.update(job, options);
    this.writes.push({ status: job.status, bytes: job.bytesDownloaded, written });
    const after = this.afterWrite;
    if (written && after?.status === job.status) {
      this.afterWrite = undefined;
      await after.run();
    }
    return written;
  }

  async get(jobId: string): Promise<DownloadJob | undefined> {
    const job = await this.inner.get(jobId);
    this.reads++;
    const after = this.afterNextGet;
    this.afterNextGet = undefined;
    await after?.();
    return job;
  }

  list(): Promise<DownloadJob[]> {
    return this.inner.list();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * Polls until `check` returns something other than `undefined` or `false` (real I/O is under way:
 * sockets, PostgreSQL), failing after 10 s with what was awaited.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T> | T,
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A few turns of the event loop, so that I/O already due (socket data, SQLite) is handled. */
async function turns(count = 20): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Registers the cross-process suite for one storage.
 * @param name the storage, for the suite title
 * @param openPair opens two instances of one fresh storage (closed after each test)
 */
export function describeCrossProcessJobs(name: string, openPair: () => Promise<StorePair>): void {
  describe(`a running download seen and cancelled through the job store from another process (${name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function lab() {
      const pair = await openPair();
      const publisher: PacedPublisher = await startPacedPublisher();
      cleanups.push(async () => {
        await publisher.close();
        await pair.run.close();
        await pair.other.close();
      });
      const jobStore = new InterleavingJobStore(pair.run);
      const bench = await createBench([makeCandidate({ sizeBytes: PDF.length })], {
        jobStore,
        fetch: publisher.fetch,
        progressPersistMs: TICK_MS,
      });
      publisher.serve(PATH, { bytes: PDF, parts: PARTS, hold: true });
      const events: DownloadProgress[] = [];
      bench.manager.subscribe((progress) => events.push(progress));
      const settled: DownloadResult[] = [];
      const download = bench.download(CALL);
      void download.then((result) => settled.push(result));
      // The first part is in; the publisher holds the rest.
      const { jobId } = await eventually("the first part", () =>
        events.find((event) => event.bytesDownloaded === FIRST_PART),
      );
      const rows = () => bench.ledger.query({ toolId: "artifact_download" });
      const staged = async () => readdir(join(bench.workspaceDir, ".staging"));
      /** One tick of a run that goes on: fired, done (its read made) and the next one armed. */
      const tick = async () => {
        await eventually("the tick's timer", () => bench.clock.pendingTimers > 0);
        const reads = jobStore.reads;
        await bench.clock.advance(TICK_MS);
        await eventually("the tick", () => jobStore.reads > reads && bench.clock.pendingTimers > 0);
      };
      return {
        tick,
        ...bench,
        other: pair.other,
        jobStore,
        publisher,
        events,
        download,
        settled,
        jobId,
        rows,
        staged,
      };
    }

    test("the bytes of a transfer reach the store once per tick, not per part, and only when they changed", async () => {
      const { clock, other, jobStore, publisher, jobId, download, tick } = await lab();
      // Parts arrived, the clock has not ticked: the store shows the running job without its bytes yet.
      expect(await other.get(jobId)).toMatchObject({ status: "running", bytesDownloaded: 0 });
      await tick();
      const seen = await other.get(jobId);
      expect(seen?.status).toBe("running");
      expect(seen?.bytesDownloaded).toBe(FIRST_PART);
      expect(seen?.bytesDownloaded).toBeLessThan(PDF.length);
      // Two more ticks with no new bytes write nothing.
      await tick();
      await tick();
      expect(jobStore.writes.filter((w) => w.status === "running" && w.bytes > 0)).toEqual([
        { status: "running", bytes: FIRST_PART, written: true },
      ]);
      publisher.release(PATH);
      expect(await download).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
      expect(await other.get(jobId)).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
      expect(clock.pendingTimers).toBe(0);
    });

    test("a cancel written by another process stops the run within one tick: cancelled, one row, no file", async () => {
      const lab1 = await lab();
      const { clock, other, jobId, settled, publisher, events } = lab1;
      const { cancelled } = await cancelStoredJob(other, jobId, {
        error: new GovernanceError("CANCELLED", "Cancelled from the console."),
        now: clock.now(),
      });
      expect(cancelled).toBe(true);
      await turns();
      expect(settled).toEqual([]);
      await clock.advance(TICK_MS);
      // One tick, and no more time: the run stops (the publisher still holds the rest of the body).
      const result = await eventually("the run to stop", () => settled[0]);
      expect(result).toMatchObject({
        status: "cancelled",
        error: { code: "CANCELLED", message: "Cancelled from the console.", retryable: false },
      });
      const rows = await lab1.rows();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        threadId: "t1",
        toolCallId: "call-1",
        status: "error",
        error: { code: "CANCELLED", message: "Cancelled from the console." },
      });
      expect(await lab1.staged()).toEqual([]);
      await expect(stat(result.finalPath)).rejects.toMatchObject({ code: "ENOENT" });
      await publisher.abandonedOnce(PATH);
      const stored = await other.get(jobId);
      expect(stored).toMatchObject({
        status: "cancelled",
        error: { message: "Cancelled from the console." },
      });
      expect(stored?.stagingName).toBeUndefined();
      expect(events.at(-1)).toMatchObject({ jobId, status: "cancelled" });
      expect(clock.pendingTimers).toBe(0);
      // The replayed call returns the cancelled job; nothing runs or is recorded again.
      expect(
        await downloadArtifact({ governance: { broker: lab1.broker, downloads: lab1.manager }, ...CALL }),
      ).toMatchObject({
        status: "cancelled",
      });
      expect(await lab1.rows()).toHaveLength(1);
    });

    test("a tick's write does not bring back a job cancelled between the tick's read and its write", async () => {
      const lab1 = await lab();
      const { clock, other, jobId, settled, jobStore } = lab1;
      // The next read of the store is the tick's: right after it, another process cancels the job.
      jobStore.afterNextGet = async () => {
        await cancelStoredJob(other, jobId, {
          error: new GovernanceError("CANCELLED", "Cancelled with sciencegate jobs cancel."),
          now: clock.now(),
        });
      };
      await clock.advance(TICK_MS);
      const result = await eventually("the run to stop", () => settled[0]);
      expect(jobStore.afterNextGet).toBeUndefined();
      // The tick found the job active, wrote its bytes only over an active status, and was refused.
      expect(jobStore.writes.filter((w) => w.status === "running" && w.bytes > 0)).toEqual([
        { status: "running", bytes: FIRST_PART, written: false },
      ]);
      expect(result).toMatchObject({
        status: "cancelled",
        error: { message: "Cancelled with sciencegate jobs cancel." },
      });
      expect(await other.get(jobId)).toMatchObject({ status: "cancelled" });
      expect(await lab1.rows()).toHaveLength(1);
      expect(await lab1.staged()).toEqual([]);
    });
  });
}
