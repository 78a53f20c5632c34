/**
 * Download deadlines: the headers timeout and the idle timeout cut one attempt (retryable, so the job
 * retries and resumes), the job deadline ends the whole run (not retried); each is a `TIMEOUT` naming
 * its option, on the job and on the ledger row. Timed on the manual clock, plus one real HTTPS run.
 */
import { afterEach, describe, expect, test } from "vitest";
import { DownloadManager } from "../../src/artifacts/download-manager.js";
import type { DownloadManagerOptions } from "../../src/artifacts/download-types.js";
import { systemClock } from "../../src/core/clock.js";
import type { ManualClock } from "../../src/testing/manual-clock.js";
import { createBench, makeCandidate, PDF, type Route, stalledBody } from "./download-harness.js";
import {
  HAS_OPENSSL,
  type HttpsPublisher,
  PUBLISHER_HOST,
  silentRoute,
  startHttpsPublisher,
} from "./https-publisher.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const CALL = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "k1",
};

/** A request whose response headers never come; it fails only when its signal aborts (as `fetch` does). */
const noHeaders: Route = (_request, signal) =>
  new Promise<Response>((_resolve, reject) =>
    signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), {
      once: true,
    }),
  );

/**
 * Steps the manual clock 10 ms at a time until `promise` settles, only while at least `minTimers`
 * timers wait: with a job deadline armed, time must not pass while the run is busy with real file
 * I/O (only the deadline's timer waits then), or a loaded machine would spend the deadline on it.
 */
async function drive<T>(clock: ManualClock, promise: Promise<T>, minTimers = 1): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => {
    done = true;
  });
  while (!done) {
    await new Promise((resolve) => setImmediate(resolve));
    if (!done && clock.pendingTimers >= minTimers) await clock.advance(10);
  }
  return tracked;
}

async function run(options: Partial<DownloadManagerOptions>, route: Route) {
  const bench = await createBench(undefined, { initialBackoffMs: 100, ...options });
  bench.routes.set(URL_1, route);
  const startedAt = bench.clock.now();
  // A finite job deadline keeps one timer armed all along: step only when another one waits too.
  const minTimers = Number.isFinite(options.jobTimeoutMs ?? Number.POSITIVE_INFINITY) ? 2 : 1;
  const result = await drive(bench.clock, bench.download(CALL), minTimers);
  const elapsedMs = bench.clock.now() - startedAt;
  const row = (await bench.ledger.findByCall("t1", "k1"))!;
  return { bench, result, elapsedMs, row };
}

describe("download deadlines (manual clock)", () => {
  test("no response headers: each attempt is cut at headersTimeoutMs and retried; the job fails with TIMEOUT naming it", async () => {
    const { bench, result, elapsedMs, row } = await run({ headersTimeoutMs: 300, maxAttempts: 3 }, noHeaders);
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "TIMEOUT", retryable: true });
    expect(result.error?.message).toContain("No response headers from arxiv.org within 300 ms");
    expect(result.error?.message).toContain("raise headersTimeoutMs");
    expect(bench.seen).toHaveLength(3);
    // three 300 ms attempts and backoffs of 100 and 200 ms
    expect(elapsedMs).toBeGreaterThanOrEqual(1200);
    expect(elapsedMs).toBeLessThanOrEqual(1250);
    expect(row).toMatchObject({ status: "error", attempts: 3, error: { code: "TIMEOUT", attempts: 3 } });
    expect(row.error?.message).toContain("headersTimeoutMs");
  });

  test("a body that stalls is cut at idleTimeoutMs; the next attempt resumes with Range and completes", async () => {
    let calls = 0;
    const { bench, result, elapsedMs, row } = await run({ idleTimeoutMs: 300 }, (request, signal) => {
      calls++;
      if (calls === 1) return new Response(stalledBody(PDF.slice(0, 10), new Promise(() => {}), signal));
      const start = Number(/bytes=(\d+)-/.exec(request.range ?? "")?.[1]);
      return new Response(PDF.slice(start), { status: 206 });
    });
    expect(result.status).toBe("completed");
    expect(bench.seen.map((seen) => seen.range)).toEqual([undefined, "bytes=10-"]);
    expect(elapsedMs).toBeGreaterThanOrEqual(400);
    expect(elapsedMs).toBeLessThanOrEqual(450);
    expect(row).toMatchObject({ status: "ok", attempts: 2 });
  });

  test("a body that stalls on every attempt fails with TIMEOUT naming idleTimeoutMs and the bytes received", async () => {
    const { result, row } = await run(
      { idleTimeoutMs: 300, maxAttempts: 2 },
      (_request, signal) => new Response(stalledBody(PDF.slice(0, 10), new Promise(() => {}), signal)),
    );
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: true } });
    expect(result.error?.message).toContain("No body bytes from arxiv.org for 300 ms after 10 bytes");
    expect(result.error?.message).toContain("raise idleTimeoutMs");
    expect(row).toMatchObject({ status: "error", attempts: 2, error: { code: "TIMEOUT" } });
  });

  test("the job deadline ends the run across retries and backoff, not retryable, naming jobTimeoutMs", async () => {
    const { bench, result, elapsedMs, row } = await run(
      { headersTimeoutMs: 300, maxAttempts: 10, jobTimeoutMs: 1000 },
      noHeaders,
    );
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: false } });
    expect(result.error?.message).toContain("did not finish within its 1000 ms job deadline");
    expect(result.error?.message).toContain("raise jobTimeoutMs");
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(elapsedMs).toBeLessThanOrEqual(1020);
    // attempts at 0–300, 400–700 and 900–1000 ms (the last one cut by the deadline)
    expect(bench.seen.length).toBeGreaterThanOrEqual(2);
    expect(bench.seen.length).toBeLessThanOrEqual(3);
    expect(row).toMatchObject({ status: "error", attempts: bench.seen.length, error: { code: "TIMEOUT" } });
    expect(row.error?.message).toContain("jobTimeoutMs");
    expect(bench.clock.pendingTimers).toBe(0);
  });

  test.each([
    ["headersTimeoutMs", 0],
    ["idleTimeoutMs", -5],
    ["jobTimeoutMs", Number.NaN],
  ] as const)("%s = %s is refused with INVALID_INPUT naming the option", async (name, value) => {
    const bench = await createBench();
    expect(
      () =>
        new DownloadManager({
          ledgerWriter: bench.ledgerWriter,
          store: bench.store,
          catalog: { source: () => undefined },
          workspaceDir: bench.workspaceDir,
          [name]: value,
        }),
    ).toThrow(expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining(name) }));
  });
});

describe.skipIf(!HAS_OPENSSL)("download deadlines against a real HTTPS publisher (loopback)", () => {
  let publisher: HttpsPublisher | undefined;
  afterEach(async () => {
    await publisher?.close();
    publisher = undefined;
  });

  test("a server that accepts and never sends headers is cut at headersTimeoutMs on each attempt", async () => {
    publisher = await startHttpsPublisher({ "/silent": silentRoute });
    const bench = await createBench([makeCandidate({ url: `https://${PUBLISHER_HOST}/silent` })], {
      hosts: [PUBLISHER_HOST],
      fetch: publisher.fetch,
      clock: systemClock,
      // The publisher is on loopback: the address check must be told so.
      lookup: async () => [{ address: "127.0.0.1", family: 4 }],
      allowPrivateAddresses: ["127.0.0.0/8"],
      headersTimeoutMs: 300,
      maxAttempts: 2,
      initialBackoffMs: 50,
    });
    const startedAt = performance.now();
    const result = await bench.download(CALL);
    const elapsedMs = performance.now() - startedAt;
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT" } });
    expect(result.error?.message).toContain("headersTimeoutMs: 300 ms");
    expect(publisher.requests).toHaveLength(2);
    expect(elapsedMs).toBeGreaterThanOrEqual(640);
    expect(elapsedMs).toBeLessThan(3_000);
    expect(await bench.ledger.findByCall("t1", "k1")).toMatchObject({
      status: "error",
      attempts: 2,
      error: { code: "TIMEOUT" },
    });
  });
});
