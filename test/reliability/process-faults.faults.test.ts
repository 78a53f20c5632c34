/**
 * The slow process-level faults (`npm run test:faults`): repeated SIGKILLs of one stdio server through
 * the pool's growing restart backoff, and one data directory that survives ten killed writers in a row.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { faultTest, printFaultSummary } from "./fault-report.js";
import { countdown, FAULTY, failure, openStdioRig } from "./fixtures/stdio-rig.js";
import { checkRecoveredDataDir, killWriterWhen, type WriterKillMoment } from "./fixtures/writer-crash.js";

printFaultSummary("Process-level faults, slow (test/reliability/process-faults.faults.test.ts)");

describe("repeated kills of one stdio server", () => {
  faultTest(
    "stdio server killed 5 times in a row",
    "5 cycles: 4 broker calls blocked in the child, SIGKILL, then one call that restarts it",
    async () => {
      const rig = await openStdioRig();
      try {
        const cycles = 5;
        const burst = 4;
        const pids = [rig.pid()];
        const restartMs: number[] = [];
        for (let cycle = 1; cycle <= cycles; cycle++) {
          const killed = rig.pid();
          const started = countdown(burst);
          const calls = Array.from({ length: burst }, (_, i) =>
            failure(
              rig.broker.invoke({
                sourceId: FAULTY,
                toolId: "block",
                input: { tag: `cycle-${cycle}-${i}` },
                sessionId: "storm",
                onProgress: started.tick,
              }),
            ),
          );
          await started.done;
          process.kill(killed, "SIGKILL");
          for (const error of await Promise.all(calls)) {
            expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
          }
          const before = performance.now();
          const next = await rig.broker.invoke({
            sourceId: FAULTY,
            toolId: "whoami",
            input: {},
            sessionId: "storm",
          });
          restartMs.push(Math.round(performance.now() - before));
          pids.push(Number(next.result.data?.pid));
        }
        // Each death of a short-lived connection doubles the wait before the next start (250 ms first).
        restartMs.forEach((ms, index) => {
          expect(ms).toBeGreaterThanOrEqual(250 * 2 ** index - 5);
        });
        expect(new Set(pids).size).toBe(cycles + 1);
        expect(rig.pool.state(FAULTY)).toMatchObject({ status: "connected", starts: cycles + 1 });
        const rows = await rig.rows("storm");
        expect(rows).toHaveLength(cycles * (burst + 1));
        const summary = await rig.ledger.summary({ sessionId: "storm" });
        expect(summary).toMatchObject({ errors: cycles * burst, ok: cycles });
        expect(summary.byErrorCode).toEqual({ UPSTREAM_UNAVAILABLE: cycles * burst });
        for (const row of rows) expect(await rig.verifiedRefs(row)).toBe(row.status === "ok" ? 3 : 1);
        return `${cycles} kills × ${burst} calls → ${summary.errors} UPSTREAM_UNAVAILABLE rows + ${summary.ok} ok rows (${rows.length}/${rows.length}); ${cycles + 1} distinct pids; restart waits ${restartMs.join(", ")} ms`;
      } finally {
        await rig.close();
      }
    },
    60_000,
  );
});

describe("one data directory, ten killed writers", () => {
  const line = (text: string) => (candidate: string) => candidate === text;
  const moments: WriterKillMoment[] = [
    { name: "row 3", killOn: line("row 3") },
    { name: "row 250", killOn: line("row 250") },
    { name: "large 10", killOn: line("large 10") },
    { name: "huge row 47 mid-write", hugeRow: 47 },
    { name: "row 1", killOn: line("row 1") },
    { name: "row 120", killOn: line("row 120") },
    { name: "large 90", killOn: line("large 90") },
    { name: "huge row 5 mid-write", hugeRow: 5 },
    { name: "row 57", killOn: line("row 57") },
    { name: "row 300", killOn: line("row 300") },
  ];
  faultTest(
    "10 successive SIGKILLs on one data dir",
    "10 writers in turn on one ledger + CAS, each killed at another moment (rows 1–300, large and torn writes)",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-writers-"));
      try {
        const recovered = new Map<string, number>();
        let tornWrites = 0;
        for (const [index, moment] of moments.entries()) {
          const run = `run${index + 1}`;
          const kill = await killWriterWhen(moment, { dataDir, run });
          expect(kill.signal).toBe("SIGKILL");
          if (kill.huge && !kill.huge.stored) tornWrites++;
          const found = await checkRecoveredDataDir(dataDir, { run, hugeRow: moment.hugeRow });
          expect(found.rows).toBeGreaterThanOrEqual(kill.reportedRows);
          recovered.set(run, found.rows);
        }
        // Later crashes never cost an earlier run a row.
        const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
        try {
          for (const [run, rows] of recovered) {
            expect((await ledger.query({ sessionId: run })).length, run).toBe(rows);
          }
          const total = [...recovered.values()].reduce((sum, rows) => sum + rows, 0);
          expect((await ledger.summary()).calls).toBe(total + moments.length); // + one probe row per recovery
          return `${moments.length} kills (${tornWrites} mid-write of a 32 MiB object): ${total} rows kept across runs (${[...recovered.values()].join("/")}), every ref and CAS object verifies after each recovery`;
        } finally {
          await ledger.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
