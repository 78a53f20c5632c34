/**
 * Download deadlines in real time against a real loopback HTTPS publisher (self-signed certificate,
 * trusted through the fetch seam): a body that trickles 1 byte/s, a server that accepts and never
 * sends headers, and a body that stalls. Each ends as a `TIMEOUT` naming its limit, close to the
 * configured time, with the attempts and the ledger row to match.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { DownloadManagerOptions } from "../../src/artifacts/download-types.js";
import { systemClock } from "../../src/core/clock.js";
import { createBench, makeCandidate, PDF } from "../artifacts/download-harness.js";
import {
  HAS_OPENSSL,
  type HttpsPublisher,
  PUBLISHER_HOST,
  type PublisherRoute,
  silentRoute,
  stallingRoute,
  startHttpsPublisher,
  tricklingRoute,
} from "../artifacts/https-publisher.js";

const CALL = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "k1",
};

let publisher: HttpsPublisher | undefined;
afterEach(async () => {
  await publisher?.close();
  publisher = undefined;
});

/** Downloads `https://publisher.test/file` served by `route`, in real time; reports what happened. */
async function downloadFrom(route: PublisherRoute, options: Partial<DownloadManagerOptions>) {
  publisher = await startHttpsPublisher({ "/file": route });
  const bench = await createBench([makeCandidate({ url: `https://${PUBLISHER_HOST}/file` })], {
    hosts: [PUBLISHER_HOST],
    fetch: publisher.fetch,
    clock: systemClock,
    lookup: async () => [{ address: "127.0.0.1", family: 4 }],
    allowPrivateAddresses: [PUBLISHER_HOST],
    ...options,
  });
  const startedAt = performance.now();
  const result = await bench.download(CALL);
  const elapsedMs = Math.round(performance.now() - startedAt);
  const row = await bench.ledger.findByCall("t1", "k1");
  console.log(
    `[download-deadlines] ${result.error?.code ?? result.status} after ${elapsedMs} ms, ${row?.attempts} attempts, ${result.bytesDownloaded} bytes: ${result.error?.message}`,
  );
  return { result, row, elapsedMs, requests: publisher.requests };
}

describe.skipIf(!HAS_OPENSSL)("download deadlines (real time, loopback HTTPS)", () => {
  test("a body trickling 1 byte/s is ended by jobTimeoutMs on attempt 1", async () => {
    const { result, row, elapsedMs, requests } = await downloadFrom(
      tricklingRoute(PDF.subarray(0, 100), 1_000),
      {
        idleTimeoutMs: 2_000,
        jobTimeoutMs: 3_000,
      },
    );
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: false } });
    expect(result.error?.message).toContain("did not finish within its 3000 ms job deadline: 1 attempt,");
    expect(result.error?.message).toContain("raise jobTimeoutMs");
    expect(elapsedMs).toBeGreaterThanOrEqual(2_990);
    expect(elapsedMs).toBeLessThan(3_800);
    expect(requests).toHaveLength(1);
    expect(result.bytesDownloaded).toBeGreaterThanOrEqual(1);
    expect(result.bytesDownloaded).toBeLessThanOrEqual(3);
    expect(row).toMatchObject({ status: "error", attempts: 1, error: { code: "TIMEOUT", retryable: false } });
    expect(row?.error?.message).toContain("jobTimeoutMs");
  });

  test("a server that never sends headers is cut at headersTimeoutMs per attempt, 3 attempts", async () => {
    const { result, row, elapsedMs, requests } = await downloadFrom(silentRoute, {
      headersTimeoutMs: 1_000,
      maxAttempts: 3,
      initialBackoffMs: 200,
    });
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: true } });
    expect(result.error?.message).toContain(`No response headers from ${PUBLISHER_HOST} within 1000 ms`);
    // 3 × 1000 ms + backoffs of 200 and 400 ms
    expect(elapsedMs).toBeGreaterThanOrEqual(3_590);
    expect(elapsedMs).toBeLessThan(4_500);
    expect(requests).toHaveLength(3);
    expect(row).toMatchObject({ status: "error", attempts: 3, error: { code: "TIMEOUT", attempts: 3 } });
    expect(row?.error?.message).toContain("headersTimeoutMs");
  });

  test("a server that never sends headers is ended by jobTimeoutMs before its retries are spent", async () => {
    const { result, row, elapsedMs, requests } = await downloadFrom(silentRoute, {
      headersTimeoutMs: 1_000,
      maxAttempts: 4,
      initialBackoffMs: 200,
      jobTimeoutMs: 1_500,
    });
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: false } });
    expect(result.error?.message).toContain("1500 ms job deadline: 2 attempts,");
    expect(elapsedMs).toBeGreaterThanOrEqual(1_490);
    expect(elapsedMs).toBeLessThan(2_300);
    expect(requests).toHaveLength(2);
    expect(row).toMatchObject({ status: "error", attempts: 2, error: { code: "TIMEOUT" } });
  });

  test("a body that stalls is cut at idleTimeoutMs and resumed with Range on the next attempt", async () => {
    const { result, row, elapsedMs, requests } = await downloadFrom(
      stallingRoute(PDF.subarray(0, 10), PDF.length),
      {
        idleTimeoutMs: 1_000,
        maxAttempts: 2,
        initialBackoffMs: 100,
      },
    );
    expect(result).toMatchObject({ status: "failed", error: { code: "TIMEOUT", retryable: true } });
    expect(result.error?.message).toContain("for 1000 ms after 10 bytes");
    expect(elapsedMs).toBeGreaterThanOrEqual(2_090);
    expect(elapsedMs).toBeLessThan(3_000);
    expect(requests.map((request) => request.range)).toEqual([undefined, "bytes=10-"]);
    expect(row).toMatchObject({ status: "error", attempts: 2, error: { code: "TIMEOUT" } });
  });
});
