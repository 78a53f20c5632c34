/**
 * Makes N governed calls (default 10,000) through the runtime users get from `createGovernance`
 * (SQLite ledger, the trivial stdio server of `lib/user-servers.ts`), sequentially after a warm-up, for
 * a CPU profile of where a governed call's time goes. Not a `*.bench.ts`. The V8 profiler (the one
 * `node --cpu-prof` starts) runs around the measured calls only, not start-up or warm-up, and its
 * profile goes to `bench/profiles/` (ignored by git); then read the top self-time functions:
 *
 *   npm run bench:profile     (this, then bench/lib/cpu-profile-top.ts bench/profiles)
 *
 * `PROFILE_CALLS=N` sets the number of calls; `PROFILE=0` measures without the profiler. Prints the CPU per call it measured (with the profiler
 * on, so a little above an unprofiled run).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { cpuBetween, selfCpu } from "./lib/cpu-meter.js";
import { trivialRuntime } from "./lib/user-servers.js";

const CALLS = Number(process.env.PROFILE_CALLS ?? 10_000);
const WARMUP = 500;

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-profile-"));
try {
  const { governance, call } = await trivialRuntime(scratch, "profile");
  try {
    for (let i = 0; i < WARMUP; i++) await call(i);
    const profiling = process.env.PROFILE !== "0";
    const session = new Session();
    if (profiling) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
      await session.post("Profiler.start");
    }
    const before = selfCpu();
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) await call(WARMUP + i);
    const wall = performance.now() - start;
    const spent = cpuBetween(before, selfCpu());
    if (profiling) {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      const out = fileURLToPath(new URL("./profiles/", import.meta.url));
      await mkdir(out, { recursive: true });
      const file = join(out, `governed-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      console.log(`Profile: ${file}`);
    }
    const rows = (await governance.ledger.summary()).calls;
    if (rows !== WARMUP + CALLS)
      throw new Error(`The ledger holds ${rows} rows for ${WARMUP + CALLS} calls.`);
    console.log(
      `${CALLS} governed calls: ${(wall / CALLS).toFixed(3)} ms wall/call, ` +
        `${(spent.mainNs / 1e6 / CALLS).toFixed(3)} ms main-thread CPU/call, ` +
        `${(spent.processNs / 1e6 / CALLS).toFixed(3)} ms process CPU/call; ${rows} ledger rows`,
    );
  } finally {
    await governance.close();
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
