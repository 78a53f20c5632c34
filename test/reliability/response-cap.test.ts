/**
 * The response size cap while an answer is read: a real streamable HTTP server (official SDK) answering
 * 32 MiB to a source capped at 64 KiB, and a real stdio child answering past the SDK's 10 MiB read
 * buffer. The memory measurements are in `response-cap.faults.test.ts`.
 */
import { afterEach, describe, expect } from "vitest";
import { faultTest, printFaultSummary } from "./fault-report.js";
import { openHttpRig } from "./fixtures/http-rig.js";
import { HUGE, type HugeHttpServer, startHugeHttpServer } from "./fixtures/huge-http-server.js";
import { FAULTY, failure, openStdioRig } from "./fixtures/stdio-rig.js";

printFaultSummary("Response cap while reading (test/reliability/response-cap.test.ts)");

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each([
  ["an SSE stream", false],
  ["a JSON body", true],
] as const)("a streamable HTTP answer of 32 MiB as %s, source cap 64 KiB", (label, json) => {
  faultTest(
    `oversized HTTP answer (${label})`,
    "call `huge` (32 MiB text) through the broker, then `whoami` on the same connection",
    async () => {
      const server: HugeHttpServer = await startHugeHttpServer({ json });
      cleanups.push(server.stop);
      const rig = await openHttpRig(server.url, 64 * 1024);
      cleanups.push(rig.close);

      const error = await failure(
        rig.broker.invoke({ sourceId: HUGE, toolId: "huge", input: { bytes: 32 * MiB }, sessionId: "big" }),
      );
      expect(error).toMatchObject({ code: "RESPONSE_TOO_LARGE", retryable: false, attempts: 1 });
      expect(error.data).toMatchObject({ maxBytes: 64 * 1024 });
      // Reading stopped near the wire limit (4 × 64 KiB + 1 MiB), not after the whole answer.
      expect(error.data?.bytes).toBeLessThan(2 * MiB);
      expect(error.message).toContain("reading stopped after");
      const rows = await rig.ledger.query({ sessionId: "big" });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        status: "error",
        error: { code: "RESPONSE_TOO_LARGE", retryable: false },
      });

      const next = await rig.broker.invoke({
        sourceId: HUGE,
        toolId: "whoami",
        input: { tag: "after" },
        sessionId: "big",
      });
      expect(next.result.data).toMatchObject({ tag: "after" });
      expect(rig.pool.state(HUGE)).toMatchObject({ status: "connected", starts: 1 });
      return `RESPONSE_TOO_LARGE after 1 attempt, read stopped at ${error.data?.bytes} bytes, 1 row; next call on the same connection`;
    },
    30_000,
  );
});

describe("a stdio answer above the SDK's 10 MiB read buffer", () => {
  faultTest(
    "oversized stdio answer",
    "call `huge` (11 MiB text) on a stdio child, then `whoami`",
    async () => {
      const rig = await openStdioRig();
      cleanups.push(rig.close);
      const first = rig.pid();
      const error = await failure(
        rig.broker.invoke({ sourceId: FAULTY, toolId: "huge", input: { bytes: 11 * MiB }, sessionId: "big" }),
      );
      expect(error).toMatchObject({ code: "RESPONSE_TOO_LARGE", retryable: false, attempts: 1 });
      expect(error.message).toContain("10485760 bytes");
      expect(error.message).toContain("streamable HTTP");
      const rows = await rig.rows("big");
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        status: "error",
        attempts: 1,
        error: { code: "RESPONSE_TOO_LARGE", retryable: false },
      });

      const next = await rig.broker.invoke({
        sourceId: FAULTY,
        toolId: "whoami",
        input: { tag: "after" },
        sessionId: "big",
      });
      expect(next.result.data).toMatchObject({ tag: "after" });
      expect(rig.pid()).not.toBe(first);
      return "RESPONSE_TOO_LARGE (the 10 MiB limit named) after 1 attempt, 1 row; next call on a restarted server";
    },
    30_000,
  );
});
