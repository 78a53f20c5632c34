/**
 * `governanceForProcess`: one opening per process, retried after a failure, and shutdown on a signal
 * that closes the runtime before the host's own handlers run. The process is a real `EventEmitter`
 * behind the `ShutdownProcess` seam (signals are emitted, `kill` is recorded); the real dev server run
 * is in test/deploy/langgraph-server.server.test.ts.
 */
import { EventEmitter } from "node:events";
import { isGovernanceError } from "sciencegate";
import { describe, expect, test } from "vitest";
import { governanceForProcess, type ShutdownProcess, type SignalListener } from "../../src/runtime/index.js";

/** An emitter standing in for `process`; `hidden` handlers are left out of `listeners()`, as tsx does. */
function fakeProcess(): ShutdownProcess & {
  emitter: EventEmitter;
  kills: string[];
  hidden: Set<SignalListener>;
} {
  const emitter = new EventEmitter();
  const kills: string[] = [];
  const hidden = new Set<SignalListener>();
  return {
    emitter,
    kills,
    hidden,
    pid: 4242,
    on: (signal, listener) => emitter.on(signal, listener),
    removeListener: (signal, listener) => emitter.removeListener(signal, listener),
    rawListeners: (signal) => emitter.rawListeners(signal) as SignalListener[],
    listeners: (signal) => (emitter.listeners(signal) as SignalListener[]).filter((l) => !hidden.has(l)),
    listenerCount: (signal) => emitter.listenerCount(signal),
    kill: (pid, signal) => {
      kills.push(`${pid}:${signal}`);
    },
  };
}

/** A runtime whose `close()` resolves when the test says so. */
function runtime() {
  let finish = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const state = { closes: 0, finish: () => finish() };
  return {
    state,
    value: {
      close: () => {
        state.closes += 1;
        return closed;
      },
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("governanceForProcess", () => {
  test("opens the runtime once, on first use, for concurrent and later callers", async () => {
    const proc = fakeProcess();
    const { value } = runtime();
    let opened = 0;
    const governance = governanceForProcess(
      async () => {
        opened += 1;
        return value;
      },
      { process: proc },
    );
    expect(opened).toBe(0);
    const [a, b] = await Promise.all([governance(), governance()]);
    expect(await governance()).toBe(a);
    expect(b).toBe(a);
    expect(opened).toBe(1);
  });

  test("a failed opening is thrown, and the next call opens again", async () => {
    const proc = fakeProcess();
    const { value } = runtime();
    let attempt = 0;
    const governance = governanceForProcess(
      async () => {
        attempt += 1;
        if (attempt === 1) throw new Error("config unreadable");
        return value;
      },
      { process: proc },
    );
    await expect(governance()).rejects.toThrow("config unreadable");
    expect(await governance()).toBe(value);
    expect(attempt).toBe(2);
  });

  test("SIGTERM closes the runtime first, then hands the signal to the host's handler", async () => {
    const proc = fakeProcess();
    const { value, state } = runtime();
    const host: string[] = [];
    proc.emitter.once("SIGTERM", (signal: string) => host.push(`host ${signal}`));
    const governance = governanceForProcess(async () => value, { process: proc });
    await governance();
    proc.emitter.emit("SIGTERM", "SIGTERM");
    await tick();
    expect(state.closes).toBe(1);
    expect(host).toEqual([]); // held back while the runtime closes
    state.finish();
    await governance.close();
    await tick();
    expect(host).toEqual(["host SIGTERM"]);
    expect(proc.kills).toEqual([]); // the host ends the process
    expect(proc.emitter.listenerCount("SIGTERM")).toBe(0); // its `once` handler removed itself
    expect(proc.emitter.listenerCount("SIGINT")).toBe(0);
  });

  test("a repeated signal while closing waits for the same close", async () => {
    const proc = fakeProcess();
    const { value, state } = runtime();
    const host: string[] = [];
    proc.emitter.once("SIGTERM", (signal: string) => host.push(`host ${signal}`));
    const governance = governanceForProcess(async () => value, { process: proc });
    await governance();
    proc.emitter.emit("SIGTERM", "SIGTERM");
    proc.emitter.emit("SIGTERM", "SIGTERM");
    proc.emitter.emit("SIGINT", "SIGINT");
    await tick();
    expect(host).toEqual([]);
    expect(state.closes).toBe(1);
    state.finish();
    await governance.close();
    await tick();
    expect(host).toEqual(["host SIGTERM"]);
    expect(proc.kills).toEqual([]);
  });

  test("without another handler, the signal is raised again once the runtime is closed", async () => {
    const proc = fakeProcess();
    const { value, state } = runtime();
    const governance = governanceForProcess(async () => value, { process: proc });
    await governance();
    state.finish();
    proc.emitter.emit("SIGINT", "SIGINT");
    await governance.close();
    await tick();
    expect(state.closes).toBe(1);
    expect(proc.kills).toEqual(["4242:SIGINT"]);
  });

  test("a handler hidden from listeners() keeps running at once", async () => {
    const proc = fakeProcess();
    const { value, state } = runtime();
    const calls: string[] = [];
    const relay: SignalListener = () => calls.push("relay");
    proc.hidden.add(relay);
    proc.emitter.on("SIGTERM", relay);
    const governance = governanceForProcess(async () => value, { process: proc });
    await governance();
    proc.emitter.emit("SIGTERM", "SIGTERM");
    expect(calls).toEqual(["relay"]);
    state.finish();
    await governance.close();
    await tick();
    expect(calls).toEqual(["relay"]); // not called twice
  });

  test("a close that fails is reported, and the host's handler still runs", async () => {
    const proc = fakeProcess();
    const reported: unknown[] = [];
    const host: string[] = [];
    proc.emitter.on("SIGTERM", () => host.push("host"));
    const governance = governanceForProcess(
      async () => ({ close: () => Promise.reject(new Error("disk gone")) }),
      {
        process: proc,
        onCloseError: (error) => reported.push(error),
      },
    );
    await governance();
    proc.emitter.emit("SIGTERM", "SIGTERM");
    await tick();
    await tick();
    expect(String(reported[0])).toContain("disk gone");
    expect(host).toEqual(["host"]);
    expect(proc.emitter.listenerCount("SIGTERM")).toBe(1); // a plain handler stays registered
  });

  test("after close(), the runtime is refused with CANCELLED and signals are left alone", async () => {
    const proc = fakeProcess();
    const { value, state } = runtime();
    const governance = governanceForProcess(async () => value, { process: proc });
    await governance();
    state.finish();
    await governance.close();
    const refused = await governance().catch((error: unknown) => error);
    expect(isGovernanceError(refused) && refused.code).toBe("CANCELLED");
    expect(proc.emitter.listenerCount("SIGTERM")).toBe(0);
    expect(state.closes).toBe(1);
  });

  test("close() before any use opens nothing", async () => {
    let opened = 0;
    const governance = governanceForProcess(
      async () => {
        opened += 1;
        return runtime().value;
      },
      { process: fakeProcess() },
    );
    await governance.close();
    expect(opened).toBe(0);
  });
});
