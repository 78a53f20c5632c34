/**
 * Process-level faults against real parts: a real stdio MCP child behind the real ServerPool and Broker
 * with a SQLite ledger and a file CAS, and a real writer process killed with SIGKILL mid-write.
 */
import { afterAll, beforeAll, describe, expect } from "vitest";
import { isAlive } from "../mcp/server-configs.js";
import { faultTest, printFaultSummary } from "./fault-report.js";
import { countdown, FAULTY, failure, openStdioRig, type StdioRig } from "./fixtures/stdio-rig.js";
import { checkRecoveredDataDir, killWriterWhen, type WriterKillMoment } from "./fixtures/writer-crash.js";

printFaultSummary("Process-level faults (test/reliability/process-faults.test.ts)");

const pidOf = (data: Record<string, unknown> | undefined): unknown => data?.pid;

describe("a stdio server killed with SIGKILL mid-call", () => {
  faultTest(
    "stdio server killed mid-call",
    "SIGKILL the child while one broker call (no retry) blocks in it; then call again",
    async () => {
      const rig = await openStdioRig();
      try {
        const killed = rig.pid();
        const started = countdown(1);
        const call = failure(
          rig.broker.invoke({
            sourceId: FAULTY,
            toolId: "block",
            input: { tag: "victim" },
            sessionId: "kill-one",
            onProgress: started.tick,
          }),
        );
        await started.done;
        process.kill(killed, "SIGKILL");
        const error = await call;
        expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true, attempts: 1 });
        expect(error.message).toContain("lost the connection during tools/call block");
        const failed = await rig.rows("kill-one");
        expect(failed).toHaveLength(1);
        expect(failed[0]).toMatchObject({
          invocationId: error.data?.invocationId,
          status: "error",
          toolId: "block",
          attempts: 1,
          error: { code: "UPSTREAM_UNAVAILABLE", retryable: true, attempts: 1 },
        });
        expect(await rig.verifiedRefs(failed[0]!)).toBe(1); // the request; no response ever came
        expect(isAlive(killed)).toBe(false);
        expect(rig.journal().filter((e) => e.event === "call" && e.tool === "block")).toEqual([
          expect.objectContaining({ pid: killed, tag: "victim" }),
        ]);

        const before = performance.now();
        const next = await rig.broker.invoke({
          sourceId: FAULTY,
          toolId: "whoami",
          input: { tag: "after" },
          sessionId: "kill-one",
        });
        const restartMs = Math.round(performance.now() - before);
        const restarted = pidOf(next.result.data);
        expect(restarted).toBe(rig.pid());
        expect(restarted).not.toBe(killed);
        expect(rig.pool.state(FAULTY)).toMatchObject({ status: "connected", starts: 2 });
        const rows = await rig.rows("kill-one");
        expect(rows.map((row) => row.status)).toEqual(["error", "ok"]);
        expect(await rig.verifiedRefs(rows[1]!)).toBe(3);
        return `UPSTREAM_UNAVAILABLE retryable after 1 attempt; 1 row for 1 call; next call restarted pid ${killed}→${String(restarted)} (starts 2) and answered in ${restartMs} ms`;
      } finally {
        await rig.close();
      }
    },
  );

  faultTest(
    "burst in flight at a kill",
    "8 broker calls blocked in the child when it is SIGKILLed",
    async () => {
      const rig = await openStdioRig();
      try {
        const killed = rig.pid();
        const burst = 8;
        const started = countdown(burst);
        const calls = Array.from({ length: burst }, (_, i) =>
          failure(
            rig.broker.invoke({
              sourceId: FAULTY,
              toolId: "block",
              input: { tag: `burst-${i}` },
              sessionId: "kill-burst",
              onProgress: started.tick,
            }),
          ),
        );
        await started.done;
        process.kill(killed, "SIGKILL");
        const errors = await Promise.all(calls);
        expect(errors.map((e) => [e.code, e.retryable])).toEqual(
          Array.from({ length: burst }, () => ["UPSTREAM_UNAVAILABLE", true]),
        );
        const rows = await rig.rows("kill-burst");
        expect(rows).toHaveLength(burst);
        expect(new Set(rows.map((row) => row.invocationId))).toEqual(
          new Set(errors.map((e) => e.data?.invocationId)),
        );
        expect(
          rows.every((row) => row.status === "error" && row.error?.code === "UPSTREAM_UNAVAILABLE"),
        ).toBe(true);
        for (const row of rows) expect(await rig.verifiedRefs(row)).toBe(1);
        const served = rig.journal().filter((e) => e.event === "call" && e.tool === "block");
        expect(served).toHaveLength(burst);
        expect(new Set(served.map((e) => e.pid))).toEqual(new Set([killed]));

        const next = await rig.broker.invoke({
          sourceId: FAULTY,
          toolId: "whoami",
          input: {},
          sessionId: "kill-burst",
        });
        expect(pidOf(next.result.data)).not.toBe(killed);
        return `${burst} calls in flight → ${errors.length} UPSTREAM_UNAVAILABLE errors, ${rows.length} error rows (${new Set(rows.map((r) => r.invocationId)).size} distinct ids); next call ok on pid ${String(pidOf(next.result.data))}`;
      } finally {
        await rig.close();
      }
    },
  );

  faultTest(
    "kill mid-call, default retries",
    "SIGKILL the child during a call whose tool allows 3 attempts",
    async () => {
      const rig = await openStdioRig({ broker: { random: () => 0.5 } });
      try {
        const killed = rig.pid();
        const started = countdown(1);
        const call = rig.broker.invoke({
          sourceId: FAULTY,
          toolId: "block_in",
          input: { pid: killed },
          sessionId: "kill-retry",
          onProgress: started.tick,
        });
        await started.done;
        process.kill(killed, "SIGKILL");
        const outcome = await call;
        expect(outcome.attempts).toBe(2);
        const answeredBy = pidOf(outcome.result.data);
        expect(answeredBy).toBe(rig.pid());
        expect(answeredBy).not.toBe(killed);
        const rows = await rig.rows("kill-retry");
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ invocationId: outcome.invocationId, status: "ok", attempts: 2 });
        expect(await rig.verifiedRefs(rows[0]!)).toBe(3);
        const served = rig.journal().filter((e) => e.event === "call" && e.tool === "block_in");
        expect(served.map((e) => e.pid)).toEqual([killed, answeredBy]);
        return `1 call, 2 attempts (pid ${killed} killed, pid ${String(answeredBy)} answered), 1 ok row`;
      } finally {
        await rig.close();
      }
    },
  );
});

describe("a stdio server that never answers", () => {
  let rig: StdioRig;
  beforeAll(async () => {
    rig = await openStdioRig({ hangTimeoutMs: 400 });
  });
  afterAll(() => rig.close());

  /** The journal's cancellation of the one `tool` call tagged `tag`, once it has arrived. */
  async function cancellationOf(tool: string, tag: string) {
    const call = rig.journal().find((e) => e.event === "call" && e.tool === tool && e.tag === tag);
    expect(call?.requestId).toBeDefined();
    const match = (event: string) =>
      rig.journal().find((e) => e.event === event && e.requestId === call?.requestId && e.pid === call?.pid);
    await expect.poll(() => match("cancelled"), { timeout: 10_000 }).toBeDefined();
    await expect.poll(() => match("aborted"), { timeout: 10_000 }).toBeDefined();
    return { call, cancelled: match("cancelled") };
  }

  faultTest(
    "server hangs past the deadline",
    "a tool that never answers, with a 400 ms manifest deadline",
    async () => {
      const pid = rig.pid();
      const before = performance.now();
      const error = await failure(
        rig.broker.invoke({
          sourceId: FAULTY,
          toolId: "hang",
          input: { tag: "deadline" },
          sessionId: "hang",
        }),
      );
      const elapsedMs = Math.round(performance.now() - before);
      // data.timeoutMs comes from the broker's own deadline, not from the SDK's later request timeout.
      expect(error).toMatchObject({ code: "TIMEOUT", retryable: true, data: { timeoutMs: 400 } });
      expect(elapsedMs).toBeGreaterThanOrEqual(395);
      const { cancelled } = await cancellationOf("hang", "deadline");
      expect(cancelled?.reason).toContain("400 ms deadline");
      const rows = await rig.rows("hang");
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "error", error: { code: "TIMEOUT" } });

      const next = await rig.broker.invoke({
        sourceId: FAULTY,
        toolId: "whoami",
        input: {},
        sessionId: "hang",
      });
      expect(pidOf(next.result.data)).toBe(pid);
      expect(rig.pool.state(FAULTY).starts).toBe(1);
      return `TIMEOUT after ${elapsedMs} ms (deadline 400); server got notifications/cancelled for request ${String(cancelled?.requestId)} and aborted it; 1 row; same pid answered next`;
    },
  );

  faultTest(
    "caller aborts a hanging call",
    "abort the request signal while the tool blocks (20 s deadline)",
    async () => {
      const pid = rig.pid();
      const controller = new AbortController();
      const error = await failure(
        rig.broker.invoke({
          sourceId: FAULTY,
          toolId: "block",
          input: { tag: "abort" },
          sessionId: "abort",
          signal: controller.signal,
          onProgress: () => controller.abort(new Error("user stopped")),
        }),
      );
      expect(error).toMatchObject({ code: "CANCELLED", retryable: false, attempts: 1 });
      const { cancelled } = await cancellationOf("block", "abort");
      expect(cancelled?.reason).toContain("cancelled");
      const rows = await rig.rows("abort");
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "error", error: { code: "CANCELLED", retryable: false } });

      const next = await rig.broker.invoke({
        sourceId: FAULTY,
        toolId: "whoami",
        input: {},
        sessionId: "abort",
      });
      expect(pidOf(next.result.data)).toBe(pid);
      return `CANCELLED; server got notifications/cancelled for request ${String(cancelled?.requestId)} and aborted it; 1 row; same pid ${pid} answered next`;
    },
  );
});

describe("a ledger writer killed with SIGKILL during writes", () => {
  const moments: WriterKillMoment[] = [
    { name: "after its first committed row", killOn: (line) => line === "row 1" },
    {
      name: "as a 1 MiB (async-path) CAS write starts",
      killOn: (line) => /^large \d+$/.test(line) && Number(line.slice(6)) >= 30,
    },
    { name: "while a 32 MiB CAS object is being written", hugeRow: 33 },
    { name: "after 200 committed rows", killOn: (line) => line === "row 200" },
    { name: "between the rows of one group commit", killOn: (line) => line === "row 42" },
  ];
  for (const moment of moments) {
    faultTest(
      `SIGKILL during writes: ${moment.name}`,
      `a child appending rows in group commits, small objects in the ledger, large in the CAS (every 10th > 256 KiB), killed ${moment.name}`,
      async () => {
        const kill = await killWriterWhen(moment);
        try {
          expect(kill.signal).toBe("SIGKILL");
          const recovered = await checkRecoveredDataDir(kill.dataDir, { hugeRow: moment.hugeRow });
          expect(recovered.rows).toBeGreaterThanOrEqual(kill.reportedRows);
          const huge = kill.huge
            ? `; the 32 MiB object was ${kill.huge.stored ? "stored whole" : `absent (temp file at ${kill.huge.tempBytes} bytes)`}`
            : "";
          return `killed on ${kill.trigger} with ${kill.reportedRows} rows reported: reopened with ${recovered.rows} rows (complete, ids 1..${recovered.rows}), ${recovered.refs} refs (${recovered.inlineRefs} in the ledger) and ${recovered.objects} CAS objects verify, ${recovered.tempFiles} temp file(s) left${huge}; integrity ok, appends again`;
        } finally {
          kill.cleanup();
        }
      },
    );
  }
});
