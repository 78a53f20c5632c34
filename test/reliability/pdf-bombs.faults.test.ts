/**
 * Hostile PDFs through the real `sciencegate extract --extractor pdfjs` process (`npm run test:faults`): a FlateDecode
 * stream that inflates to 2 GiB, the same stream used three times, a RunLengthDecode stream pdf.js
 * decodes itself, and one page of endless text. Each
 * run is measured by `/usr/bin/time -v` (peak resident memory of the whole process, wall time) and
 * SIGKILLed by this test if it passes 2 GiB, so a regression cannot take the machine with it.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { REPO_ROOT, TSX_LOADER, tempDir } from "../cli/cli-harness.js";
import { compressionBombPdf, hugeTextPagePdf } from "../fixtures/pdf/hostile-pdf.js";
import { faultTest, printFaultSummary } from "./fault-report.js";

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
/** The bound the extraction must stay under, and the point where this test kills it. */
const PEAK_BOUND = GIB;
const KILL_AT = 2 * GIB;
const TIME = "/usr/bin/time";

printFaultSummary("Hostile PDFs (test/reliability/pdf-bombs.faults.test.ts)");

interface ExtractRun {
  code: number | null;
  stderr: string;
  peakBytes: number;
  seconds: number;
  killed: boolean;
}

/** The processes `time` started (the node running the CLI), read from /proc. */
function childPids(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
    return children.filter(Boolean).map(Number);
  } catch {
    return []; // gone already
  }
}

function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return Number(match?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Runs `sciencegate extract <pdf>` (sources through tsx) under `/usr/bin/time -v`. */
function extractInChild(pdf: Buffer): Promise<ExtractRun> {
  const dir = tempDir();
  writeFileSync(join(dir, "hostile.pdf"), pdf);
  const argv = ["-v", process.execPath, "--import", TSX_LOADER, join(REPO_ROOT, "src/cli/main.ts")];
  // pdf.js: the bounds below are its own (the pdftotext backend's are in pdf-pool.faults.test.ts).
  const child = spawn(TIME, [...argv, "extract", "hostile.pdf", "--extractor", "pdfjs", "--json"], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let killed = false;
  const guard = setInterval(() => {
    for (const pid of child.pid === undefined ? [] : childPids(child.pid)) {
      if (rssBytes(pid) <= KILL_AT) continue;
      killed = true;
      process.kill(pid, "SIGKILL");
    }
  }, 20);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearInterval(guard);
      const peakKib = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
      const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(stderr);
      const seconds = wall
        ? Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3])
        : Number.NaN;
      resolve({ code, stderr, peakBytes: Number(peakKib ?? Number.NaN) * 1024, seconds, killed });
    });
  });
}

const mib = (bytes: number) => `${Math.round(bytes / MIB)} MiB`;

const BOMBS: [string, () => Buffer][] = [
  [
    "FlateDecode stream inflating to 2 GiB (2.1 MB file)",
    () => compressionBombPdf({ decodedBytes: 2 * GIB }),
  ],
  [
    "the same 2 GiB stream listed 3 times in /Contents",
    () => compressionBombPdf({ decodedBytes: 2 * GIB, references: 3 }),
  ],
  [
    "a 2 GiB form XObject drawn 3 times",
    () => compressionBombPdf({ decodedBytes: 2 * GIB, references: 3, via: "xobject" }),
  ],
  [
    "RunLengthDecode stream decoding to 2 GiB (32 MB file; pdf.js decodes it synchronously)",
    () => compressionBombPdf({ decodedBytes: 2 * GIB, filter: "RunLengthDecode" }),
  ],
];

describe.skipIf(!existsSync(TIME))("sciencegate extract on hostile PDFs (needs /usr/bin/time)", () => {
  for (const [scenario, build] of BOMBS) {
    faultTest(
      scenario,
      "sciencegate extract with the default limits, a real process",
      async () => {
        const run = await extractInChild(build());
        expect(run.killed, `killed by the test at ${mib(KILL_AT)}`).toBe(false);
        expect(run.stderr).toMatch(/RESPONSE_TOO_LARGE: PDF hostile\.pdf exceeds the maxMemoryBytes limit/);
        expect(run.code).toBe(1);
        expect(run.peakBytes).toBeLessThan(PEAK_BOUND);
        expect(run.seconds).toBeLessThan(60);
        return `RESPONSE_TOO_LARGE (maxMemoryBytes) after ${run.seconds.toFixed(1)} s, peak RSS ${mib(run.peakBytes)}`;
      },
      150_000,
    );
  }

  faultTest(
    "one page of endless text: 88 M characters from a 510 KB file",
    "sciencegate extract with the default limits (20 M characters), a real process",
    async () => {
      const run = await extractInChild(hugeTextPagePdf(1_100_000));
      expect(run.killed, `killed by the test at ${mib(KILL_AT)}`).toBe(false);
      const refused = /RESPONSE_TOO_LARGE: .* maxCharacters limit: .* \(at least (\d+)\)/.exec(run.stderr);
      expect(refused, run.stderr.slice(0, 500)).not.toBeNull();
      // Stopped as the text arrived, not after the page's 88 M characters were all collected.
      expect(Number(refused?.[1])).toBeLessThan(21_000_000);
      expect(run.peakBytes).toBeLessThan(PEAK_BOUND);
      expect(run.seconds).toBeLessThan(110); // before the 120 s timeoutMs
      return `RESPONSE_TOO_LARGE (maxCharacters) at ${refused?.[1]} characters after ${run.seconds.toFixed(1)} s, peak RSS ${mib(run.peakBytes)}`;
    },
    150_000,
  );
});
