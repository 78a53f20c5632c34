/**
 * A replica process of the replica tests: a worker script run by Node with tsx, given its plan as
 * one JSON argument. The worker prints `{"ready": true}` once it is set up, waits for a line on
 * stdin before it starts, prints one JSON line per call (`{"call": k, "outcome": "ok" | <code>, ...}`)
 * and exits 0 when it is done.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { expect } from "vitest";

/** One call's line, as the worker printed it. */
export interface CallReport {
  call: number;
  /** `ok`, or the error code (or text) the call failed with. */
  outcome: string;
  [field: string]: unknown;
}

/** A started replica. */
export interface Replica {
  name: string;
  child: ChildProcess;
  /** The calls it reported so far, by call number (one line per call). */
  outcomes: Map<number, CallReport>;
  /** Its exit code; `null` when a signal ended it. */
  done: Promise<number | null>;
  /** Lets it start its calls. */
  go(): void;
}

/**
 * Spawns the worker and waits until it says it is ready.
 * @param worker the worker script's path
 * @param plan its plan (passed as JSON); `replica` is its name
 * @returns the replica, ready and waiting for `go()`
 * @throws when the worker exits before it is ready (with its stderr)
 */
export async function startReplica(
  worker: string,
  plan: Record<string, unknown> & { replica: string },
): Promise<Replica> {
  const child = spawn(process.execPath, ["--import", "tsx", worker, JSON.stringify(plan)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const outcomes = new Map<number, CallReport>();
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += String(chunk);
  });
  let buffered = "";
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout!.on("data", (chunk) => {
    buffered += String(chunk);
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = JSON.parse(buffered.slice(0, nl)) as { ready?: true } & Partial<CallReport>;
      buffered = buffered.slice(nl + 1);
      if (line.ready) onReady();
      if (line.call !== undefined) {
        expect(outcomes.has(line.call)).toBe(false); // one outcome per call
        outcomes.set(line.call, line as CallReport);
      }
    }
  });
  const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await Promise.race([
    ready,
    done.then((code) => {
      throw new Error(`replica ${plan.replica} exited (${code}) before it was ready: ${stderr}`);
    }),
  ]);
  return { name: plan.replica, child, outcomes, done, go: () => child.stdin!.write("go\n") };
}
