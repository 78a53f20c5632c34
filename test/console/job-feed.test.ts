/**
 * The console's shared job reader over a real in-memory job store and a manual clock: one store read
 * per interval however many streams are open, none while no stream is open, newest list only, errors
 * handed to every stream, and a console that closes ends every stream.
 */
import { describe, expect, test } from "vitest";
import { MemoryDownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { JOB_POLL_MS, JobFeed } from "../../src/console/job-feed.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { makeJob } from "../artifacts/download-harness.js";

function rig() {
  const store = new MemoryDownloadJobStore();
  const clock = new ManualClock(1_000);
  const closing = new AbortController();
  let failNext: Error | undefined;
  const feed = new JobFeed(
    async () => {
      if (failNext) {
        const error = failNext;
        failNext = undefined;
        throw error;
      }
      return store.list();
    },
    clock,
    closing.signal,
  );
  return { store, clock, closing, feed, fail: (error: Error) => (failNext = error) };
}

const never = new AbortController().signal;

describe("JobFeed", () => {
  test("ten streams cost one store read per interval (and one each to start); with none open, none", async () => {
    const { store, clock, feed } = rig();
    await store.create(makeJob("job-1", "running"));
    await clock.advance(10 * JOB_POLL_MS);
    expect(feed.reads).toBe(0);

    const streams = Array.from({ length: 10 }, () => feed.subscribe());
    const snapshots = await Promise.all(streams.map(() => feed.snapshot()));
    expect(snapshots.map((jobs) => jobs.length)).toEqual(Array(10).fill(1));
    expect(feed.reads).toBe(10);

    const arrived = streams.map((stream) => stream.next(never));
    await clock.advance(JOB_POLL_MS);
    const updates = await Promise.all(arrived);
    expect(feed.reads).toBe(11);
    for (const update of updates) {
      expect(update).toMatchObject({ jobs: [{ jobId: "job-1", status: "running" }] });
    }
    for (let i = 0; i < 3; i++) await clock.advance(JOB_POLL_MS);
    expect(feed.reads).toBe(14);

    for (const stream of streams) stream.close();
    expect(feed.subscribers).toBe(0);
    for (let i = 0; i < 4; i++) await clock.advance(JOB_POLL_MS);
    expect(feed.reads).toBe(14); // the sleep under way ends, finds nobody, and the polling stops unread
    expect(clock.pendingTimers).toBe(0);

    const again = feed.subscribe();
    const next = again.next(never);
    await clock.advance(JOB_POLL_MS);
    expect(await next).toMatchObject({ jobs: [{ jobId: "job-1" }] });
    expect(feed.reads).toBe(15);
    again.close();
  });

  test("a slow stream gets the newest list, not every one it missed", async () => {
    const { store, clock, feed } = rig();
    const stream = feed.subscribe();
    await store.create(makeJob("job-1", "running"));
    await clock.advance(JOB_POLL_MS);
    await store.update({ ...makeJob("job-1", "completed"), bytesDownloaded: 42 });
    await clock.advance(JOB_POLL_MS);
    expect(feed.reads).toBe(2);
    expect(await stream.next(never)).toMatchObject({ jobs: [{ status: "completed", bytesDownloaded: 42 }] });
    const pending = stream.next(never);
    await clock.advance(JOB_POLL_MS);
    expect(await pending).toMatchObject({ jobs: [{ status: "completed" }] });
    stream.close();
  });

  test("a new stream's snapshot is read now, never the feed's last list (a page just rendered stays true)", async () => {
    const { store, clock, feed } = rig();
    const open = feed.subscribe();
    await store.create(makeJob("job-1", "running"));
    const polled = open.next(never);
    await clock.advance(JOB_POLL_MS);
    expect(await polled).toMatchObject({ jobs: [{ status: "running" }] });
    await store.update(makeJob("job-1", "cancelled")); // the Cancel form; its redirect renders the page
    expect(await feed.snapshot()).toMatchObject([{ status: "cancelled" }]);
    open.close();
  });

  test("a failed read reaches every stream, and the next interval reads again", async () => {
    const { clock, feed, fail } = rig();
    const a = feed.subscribe();
    const b = feed.subscribe();
    fail(new Error("store closed"));
    const [ea, eb] = [a.next(never), b.next(never)];
    await clock.advance(JOB_POLL_MS);
    expect(await ea).toEqual({ error: new Error("store closed") });
    expect(await eb).toEqual({ error: new Error("store closed") });
    const next = a.next(never);
    await clock.advance(JOB_POLL_MS);
    expect(await next).toEqual({ jobs: [] });
    a.close();
    b.close();
  });

  test("a stream's own stop, its close and the console's close each end its wait with undefined", async () => {
    const { clock, closing, feed } = rig();
    const stop = new AbortController();
    const a = feed.subscribe();
    const waiting = a.next(stop.signal);
    stop.abort();
    expect(await waiting).toBeUndefined();

    const b = feed.subscribe();
    const closed = b.next(never);
    b.close();
    expect(await closed).toBeUndefined();

    const c = feed.subscribe();
    const ended = c.next(never);
    closing.abort();
    expect(await ended).toBeUndefined();
    await clock.advance(JOB_POLL_MS);
    expect(clock.pendingTimers).toBe(0);
    expect(await c.next(never)).toBeUndefined();
  });
});
