import { getEventListeners } from "node:events";
import { describe, expect, test } from "vitest";
import { isGovernanceError } from "../../src/core/errors.js";
import { InflightCalls } from "../../src/core/inflight-calls.js";
import { ManualClock } from "../../src/testing/manual-clock.js";

/** A call that ends when the test says so, or with its signal's reason when aborted. */
function gatedCall() {
  let finish: (value: string) => void = () => {};
  let signal: AbortSignal | undefined;
  const work = (given: AbortSignal) => {
    signal = given;
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      given.addEventListener("abort", () => reject(given.reason), { once: true });
    });
  };
  return { work, finish: (value: string) => finish(value), signal: () => signal };
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => `ok:${String(value)}`,
    (error: unknown) => (isGovernanceError(error) ? error.code : `other:${String(error)}`),
  );

describe("InflightCalls", () => {
  test("after close() begins a call is refused with CANCELLED and never runs", async () => {
    const inflight = new InflightCalls(new ManualClock(0), "broker");
    await inflight.close(1_000);
    let ran = false;
    const refused = inflight.run(async () => {
      ran = true;
    });
    await expect(refused).rejects.toMatchObject({
      code: "CANCELLED",
      message: "The broker is closed; the call was not started.",
      data: { reason: "closed" },
    });
    expect(ran).toBe(false);
    expect(inflight.isClosed).toBe(true);
  });

  test("close() waits for running calls; one that ends within the grace period is not cut", async () => {
    const clock = new ManualClock(0);
    const inflight = new InflightCalls(clock, "broker");
    const call = gatedCall();
    const running = outcome(inflight.run(call.work));
    await clock.advance(0);
    let closed = false;
    const closing = inflight.close(100).then(() => {
      closed = true;
    });
    await clock.advance(99);
    expect(closed).toBe(false);
    call.finish("done");
    await closing;
    expect(await running).toBe("ok:done");
    expect(call.signal()?.aborted).toBe(false);
    // The grace timer was dropped with the last call: nothing is left pending on the clock.
    expect(clock.pendingTimers).toBe(0);
  });

  test("a call still running after the grace period is aborted with a CANCELLED reason; close() waits for it", async () => {
    const clock = new ManualClock(0);
    const inflight = new InflightCalls(clock, "download manager");
    const slow = gatedCall();
    const fast = gatedCall();
    const slowOutcome = inflight.run(slow.work);
    const fastOutcome = outcome(inflight.run(fast.work));
    await clock.advance(0);
    const closing = inflight.close(50);
    fast.finish("fast");
    await clock.advance(50);
    await closing;
    expect(await fastOutcome).toBe("ok:fast");
    await expect(slowOutcome).rejects.toMatchObject({
      code: "CANCELLED",
      message: "The download manager closed while the call was running (grace period 50 ms).",
      data: { reason: "closed", graceMs: 50 },
    });
    expect(inflight.size).toBe(0);
  });

  test("the caller's own signal still cancels its call; close() is idempotent", async () => {
    const clock = new ManualClock(0);
    const inflight = new InflightCalls(clock, "broker");
    const caller = new AbortController();
    const call = gatedCall();
    const running = inflight.run(call.work, caller.signal);
    await clock.advance(0);
    caller.abort(new Error("user pressed stop"));
    await expect(running).rejects.toThrow("user pressed stop");
    const first = inflight.close(10);
    expect(inflight.close(20)).toBe(first);
    await first;
  });

  test("with sharedSignal, calls without a signal share one that close() cuts; callers' own signals stay theirs", async () => {
    const clock = new ManualClock(0);
    const inflight = new InflightCalls(clock, "broker", { sharedSignal: true });
    const a = gatedCall();
    const b = gatedCall();
    const own = gatedCall();
    const caller = new AbortController();
    const aOutcome = outcome(inflight.run(a.work));
    const bOutcome = outcome(inflight.run(b.work));
    const ownOutcome = outcome(inflight.run(own.work, caller.signal));
    await clock.advance(0);
    expect(a.signal()).toBe(b.signal());
    expect(own.signal()).not.toBe(a.signal());
    // The gated calls each left a listener on the shared signal; calls that remove theirs leave none.
    const shared = a.signal() as AbortSignal;
    expect(getEventListeners(shared, "abort")).toHaveLength(2);
    const closing = inflight.close(10);
    await clock.advance(10);
    await closing;
    expect(await aOutcome).toBe("CANCELLED");
    expect(await bOutcome).toBe("CANCELLED");
    expect(await ownOutcome).toBe("CANCELLED");
  });
});
