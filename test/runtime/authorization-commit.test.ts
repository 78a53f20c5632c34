/**
 * When the authorization row of a call commits. A safe call's row (`policy_not_dangerous`: nobody
 * decided anything) commits with the invocation row, so the call does not wait for it; `recorded`
 * does, and reports its failure. A human's decision is committed before the call runs.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { AuthorizationRecord } from "../../src/governance/audit/index.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import { createLabRuntime, type LabRuntime } from "../nodes/approval-harness.js";

/** A ledger whose authorization commits wait until the test lets them through (or fails them). */
class GatedLedger extends MemoryLedger {
  readonly held: Array<{ record: AuthorizationRecord; pass: () => void; fail: (e: Error) => void }> = [];
  override appendAuthorization(record: AuthorizationRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.held.push({
        record,
        pass: () => resolve(super.appendAuthorization(record)),
        fail: reject,
      });
    });
  }
}

const runtimes: LabRuntime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.governance.close();
});

async function lab() {
  const ledger = new GatedLedger();
  const rt = await createLabRuntime({}, { ledger });
  runtimes.push(rt);
  return { rt, ledger };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("authorization rows and the call they allow", () => {
  test("a safe call runs while its authorization row is still committing; recorded waits for that row", async () => {
    const { rt, ledger } = await lab();
    const outcome = await rt.governance.broker.invoke({
      sourceId: "lab",
      toolId: "search",
      input: { query: "fast" },
      session: "s1",
    });
    // The tool ran and answered; the authorization row is queued, not committed.
    expect(rt.calls).toEqual({ "search:fast": 1 });
    expect(ledger.held.map((h) => h.record.decisionSource)).toEqual(["policy_not_dangerous"]);
    let recorded = false;
    const waiting = rt.governance.broker.recorded(outcome.invocationId).then(() => {
      recorded = true;
    });
    for (let i = 0; i < 5; i++) await tick();
    expect(recorded).toBe(false);
    ledger.held[0]!.pass();
    await waiting;
    const row = await ledger.get(outcome.invocationId);
    const [authorization] = await ledger.listAuthorizations();
    expect(row?.authorizationId).toBe(authorization?.id);
  });

  test("an authorization row that fails to commit makes recorded reject with that error, and nothing is unhandled", async () => {
    const { rt, ledger } = await lab();
    const outcome = await rt.governance.broker.invoke({
      sourceId: "lab",
      toolId: "search",
      input: { query: "lost" },
      session: "s1",
    });
    ledger.held[0]!.fail(new Error("disk full"));
    await expect(rt.governance.broker.recorded(outcome.invocationId)).rejects.toThrow("disk full");
  });

  test("a human's decision is committed before the call it allows runs", async () => {
    const { rt, ledger } = await lab();
    const call = {
      sourceId: "lab",
      toolId: "write",
      input: { query: "w" },
      session: "s1",
      threadId: "s1",
      toolCallId: "call-1",
    };
    const request = createAuthorizationRequest(rt.governance.catalog, call);
    const deciding = rt.governance.permissions.decide(request, { decision: "allow_once" });
    await tick();
    expect(ledger.held.map((h) => h.record.decisionSource)).toEqual(["user_once"]);
    let decided = false;
    void deciding.then(() => {
      decided = true;
    });
    for (let i = 0; i < 5; i++) await tick();
    expect(decided).toBe(false);
    ledger.held[0]!.pass();
    await deciding;
    await rt.governance.broker.invoke(call);
    expect(rt.calls).toEqual({ "write:w": 1 });
  });
});
