/**
 * CPU time of this process and of child processes, split into the main thread (where a call's
 * JavaScript runs) and every other thread (libuv's pool, V8's GC helpers, SQLite's checkpoint thread).
 * Linux reports each thread's time on the CPU in nanoseconds (`/proc/<pid>/task/<tid>/schedstat`);
 * elsewhere the main thread's share is unknown and only `process.cpuUsage()` is read.
 */
import { readdirSync, readFileSync } from "node:fs";

/** CPU time so far, in nanoseconds. */
export interface CpuSample {
  /** The main thread (the event loop). NaN where the platform does not say. */
  mainNs: number;
  /** Every thread of the process, main included (live threads for a child; all, for this process). */
  processNs: number;
}

/** On-CPU nanoseconds of one thread, or NaN when unreadable. */
function threadNs(pid: number, tid: number | string): number {
  try {
    const [runNs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
    return Number(runNs);
  } catch {
    return Number.NaN;
  }
}

/**
 * This process's CPU time: its main thread's from `schedstat`, the whole process's from
 * `process.cpuUsage()` (which also counts threads that have ended).
 * @returns the sample
 */
export function selfCpu(): CpuSample {
  const { user, system } = process.cpuUsage();
  return { mainNs: threadNs(process.pid, process.pid), processNs: (user + system) * 1000 };
}

/**
 * A child process's CPU time, summed over its live threads.
 * @param pid the child's process id
 * @returns the sample (NaN for both when the child is gone or the platform does not say)
 */
export function childCpu(pid: number): CpuSample {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { mainNs: Number.NaN, processNs: Number.NaN };
  }
  let processNs = 0;
  for (const tid of tids) {
    const ns = threadNs(pid, tid);
    if (Number.isFinite(ns)) processNs += ns;
  }
  return { mainNs: threadNs(pid, pid), processNs };
}

/**
 * The CPU time between two samples.
 * @param before the earlier sample
 * @param after the later sample
 * @returns main-thread and whole-process nanoseconds spent in between
 */
export function cpuBetween(before: CpuSample, after: CpuSample): CpuSample {
  return { mainNs: after.mainNs - before.mainNs, processNs: after.processNs - before.processNs };
}
