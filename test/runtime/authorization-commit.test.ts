/**
 * When the authorization row of a call commits. A safe call's row (`policy_not_dangerous`: nobody
 * decided anything) is written after the call ran, in the invocation row's commit, ahead of it, and
 * `invoke` returns once that commit is durable. A human's decision is committed before the call it
 * allows runs.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { LedgerBatchOptions, LedgerWrite, LedgerWriteResult } from "../../src/governance/audit/index.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import { createLabRuntime, type LabRuntime } from "../nodes/approval-harness.js";

/** A store whose commits of authorization rows wait until the test lets them through (or fails them). */
class GatedLedger extends MemoryLedger {
  readonly held: Array<{ writes: readonly LedgerWrite[]; pass: () => void; fail: (e: Error) => void }> = [];
  override appendBatch(
    writes: readonly LedgerWrite[],
    options?: LedgerBatchOptions,
  ): Promise<LedgerWriteResult[]> {
    if (!writes.some((write) => write.kind === "authorization")) return super.appendBatch(writes, options);
    return new Promise((resolve, reject) => {
      this.held.push({ writes, pass: () => resolve(super.appendBatch(writes, options)), fail: reject });
    });
  }
}

const runtimes: LabRuntime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
});

async function lab() {
  const ledger = new GatedLedger();
  const rt = await createLabRuntime({}, { ledger });
  runtimes.push(rt);
  return { rt, ledger };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const decisionSources = (ledger: GatedLedger) =>
  ledger.held.flatMap((h) =>
    h.writes.flatMap((w) => (w.kind === "authorization" ? [w.record.decisionSource] : [])),
  );

describe("authorization rows and the call they allow", () => {
  test("a safe call's authorization row is written in its invocation row's commit, ahead of it; invoke returns once that commit is in", async () => {
    const { rt, ledger } = await lab();
    let returned = false;
    const invoked = rt.governance.broker
      .invoke({ sourceId: "lab", toolId: "search", input: { query: "fast" }, sessionId: "s1" })
      .finally(() => {
        returned = true;
      });
    for (let i = 0; i < 20 && ledger.held.length === 0; i++) await tick();
    // The tool ran before its authorization row was even queued; one batch holds both rows.
    expect(rt.calls).toEqual({ "search:fast": 1 });
    expect(ledger.held).toHaveLength(1);
    const [authorization, invocation] = ledger.held[0]!.writes;
    expect(ledger.held[0]!.writes).toHaveLength(2);
    expect(authorization).toMatchObject({
      kind: "authorization",
      record: { decisionSource: "policy_not_dangerous" },
    });
    expect(invocation).toMatchObject({
      kind: "invocation",
      record: {
        status: "ok",
        authorizationId: authorization?.kind === "authorization" && authorization.record.id,
      },
    });
    for (let i = 0; i < 5; i++) await tick();
    expect(returned).toBe(false);
    ledger.held[0]!.pass();
    const outcome = await invoked;
    const row = await ledger.get(outcome.invocationId);
    const [stored] = await ledger.listAuthorizations();
    expect(row?.authorizationId).toBe(stored?.id);
    expect(stored?.decisionSource).toBe("policy_not_dangerous");
  });

  test("an authorization row that fails to commit: the call is not answered ok, and nothing is unhandled", async () => {
    const { rt, ledger } = await lab();
    const invoked = rt.governance.broker
      .invoke({ sourceId: "lab", toolId: "search", input: { query: "lost" }, sessionId: "s1" })
      .catch((e: unknown) => e);
    for (let i = 0; i < 20 && ledger.held.length === 0; i++) await tick();
    ledger.held[0]!.fail(new Error("disk full"));
    const error = await invoked;
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", data: { invocationId: expect.any(String) } });
    expect((error as Error).message).toContain("disk full");
  });

  test("a human's decision is committed before the call it allows runs", async () => {
    const { rt, ledger } = await lab();
    const call = {
      sourceId: "lab",
      toolId: "write",
      input: { query: "w" },
      sessionId: "s1",
      threadId: "s1",
      toolCallId: "call-1",
    };
    const request = createAuthorizationRequest(rt.governance.catalog, call);
    const deciding = rt.governance.permissions.decide(request, { decision: "allow_once" });
    for (let i = 0; i < 20 && ledger.held.length === 0; i++) await tick();
    expect(decisionSources(ledger)).toEqual(["user_once"]);
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
