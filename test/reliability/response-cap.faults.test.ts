/**
 * Memory while an oversized answer arrives: a hostile MCP server (official SDK) in its own process
 * answers 128 MiB over streamable HTTP to a source capped at 1 MiB, and a stdio child answers 64 MiB;
 * the growth of this (the client's) process is sampled while the broker call runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, describe, expect } from "vitest";
import { repoRoot } from "../mcp/server-configs.js";
import { faultTest, printFaultSummary } from "./fault-report.js";
import { openHttpRig } from "./fixtures/http-rig.js";
import { HUGE, hugeHttpServerPath } from "./fixtures/huge-http-server.js";
import { FAULTY, failure, openStdioRig } from "./fixtures/stdio-rig.js";

printFaultSummary("Response cap while reading, memory (test/reliability/response-cap.faults.test.ts)");

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts the fixture server in a child process and returns its URL. */
async function spawnHugeServer(json: boolean): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", hugeHttpServerPath], {
    cwd: repoRoot,
    env: { ...process.env, HUGE_JSON: json ? "1" : "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) return (JSON.parse(line) as { url: string }).url;
  throw new Error("the huge server exited before printing its URL");
}

/** Peak growth (MiB) of this process's RSS and array buffers while `run` runs, sampled every 5 ms. */
async function measure<T>(run: () => Promise<T>): Promise<{ value: T; rssMiB: number; buffersMiB: number }> {
  const start = process.memoryUsage();
  const startMaxRss = process.resourceUsage().maxRSS * 1024;
  let rss = start.rss;
  let buffers = start.arrayBuffers;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss);
    buffers = Math.max(buffers, now.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  try {
    const value = await run();
    sample();
    // The OS's high-water mark also sees a peak inside a long synchronous parse, between two samples.
    const maxRssGrowth = process.resourceUsage().maxRSS * 1024 - Math.max(startMaxRss, start.rss);
    return {
      value,
      rssMiB: Math.round(Math.max(rss - start.rss, maxRssGrowth) / MiB),
      buffersMiB: Math.round((buffers - start.arrayBuffers) / MiB),
    };
  } finally {
    clearInterval(timer);
  }
}

describe.each([
  ["an SSE stream", false],
  ["a JSON body", true],
] as const)("a 128 MiB streamable HTTP answer as %s, source cap 1 MiB", (label, json) => {
  faultTest(
    `128 MiB HTTP answer, memory (${label})`,
    "call `huge` (128 MiB text) from a server in its own process; sample this process's memory",
    async () => {
      const url = await spawnHugeServer(json);
      const rig = await openHttpRig(url, MiB);
      cleanups.push(rig.close);
      await rig.broker.invoke({ sourceId: HUGE, toolId: "whoami", input: {}, sessionId: "warm" });

      const {
        value: error,
        rssMiB,
        buffersMiB,
      } = await measure(() =>
        failure(
          rig.broker.invoke({
            sourceId: HUGE,
            toolId: "huge",
            input: { bytes: 128 * MiB },
            sessionId: "big",
          }),
        ),
      );
      const observed = `${error.code} after ${error.attempts} attempt(s); RSS +${rssMiB} MiB, array buffers +${buffersMiB} MiB`;
      console.log(`${label}: ${observed}`);
      expect(error).toMatchObject({ code: "RESPONSE_TOO_LARGE", retryable: false, attempts: 1 });
      // The wire limit is 4 × 1 MiB + 1 MiB; what is read stays a few times that, far below 128 MiB.
      expect(rssMiB).toBeLessThan(3 + 40);
      expect(buffersMiB).toBeLessThan(3 + 40);
      expect(await rig.ledger.query({ sessionId: "big" })).toHaveLength(1);
      const next = await rig.broker.invoke({
        sourceId: HUGE,
        toolId: "whoami",
        input: { tag: "n" },
        sessionId: "big",
      });
      expect(next.result.data).toMatchObject({ tag: "n" });
      return `${observed}; 1 row; next call OK on the same connection`;
    },
    120_000,
  );
});

describe("a 64 MiB stdio answer", () => {
  faultTest(
    "64 MiB stdio answer, memory",
    "call `huge` (64 MiB text) on a stdio child; sample this process's memory",
    async () => {
      const rig = await openStdioRig();
      cleanups.push(rig.close);
      const first = rig.pid();
      const {
        value: error,
        rssMiB,
        buffersMiB,
      } = await measure(() =>
        failure(
          rig.broker.invoke({
            sourceId: FAULTY,
            toolId: "huge",
            input: { bytes: 64 * MiB },
            sessionId: "big",
          }),
        ),
      );
      const observed = `${error.code} after ${error.attempts} attempt(s); RSS +${rssMiB} MiB, array buffers +${buffersMiB} MiB`;
      console.log(`stdio: ${observed}`);
      expect(error).toMatchObject({ code: "RESPONSE_TOO_LARGE", retryable: false, attempts: 1 });
      expect(await rig.rows("big")).toHaveLength(1);
      const next = await rig.broker.invoke({
        sourceId: FAULTY,
        toolId: "whoami",
        input: { tag: "n" },
        sessionId: "big",
      });
      expect(next.result.data).toMatchObject({ tag: "n" });
      expect(rig.pid()).not.toBe(first);
      return `${observed}; 1 row; next call OK on a restarted server`;
    },
    120_000,
  );
});
