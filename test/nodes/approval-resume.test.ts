import { describe, expect, test } from "vitest";
import { createApprovalGate } from "../../src/nodes/approval-gate.js";
import {
  bodyOf,
  cardFor,
  decisionSources,
  go,
  interruptsOf,
  labAgent,
  labRuntimes,
  resume,
  resumeNothing,
  thread,
  toolResults,
} from "./approval-harness.js";

const lab = labRuntimes();

describe("approval gate: resumes, grants and waiting", () => {
  test("a bad resume value asks again without wedging the thread; the next good answer runs the call", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [[{ tool: "write", query: "a" }]]);
    const paused = await agent.invoke(go, thread("t1"));
    const bad = await agent.invoke(resume([[cardFor(paused, "a"), { decision: "maybe" }]]), thread("t1"));
    const [again] = interruptsOf(bad);
    expect(again?.id).not.toBe(cardFor(paused, "a").id);
    expect(again?.value).toMatchObject({ requestId: cardFor(paused, "a").value?.requestId });
    expect((again?.value as { invalidResponse?: string } | undefined)?.invalidResponse).toContain("decision");
    expect(rt.calls).toEqual({});
    expect(await decisionSources(rt)).toEqual([]);
    const done = await agent.invoke(resume([[again as never, { decision: "allow_once" }]]), thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(rt.calls).toEqual({ "write:a": 1 });
    expect(await decisionSources(rt)).toEqual(["user_once"]);
  });

  test("a counting server proves each approved call runs exactly once across several partial resumes", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "write", query: "b" },
        { tool: "delete", query: "c" },
        { tool: "search", query: "d" },
      ],
    ]);
    let state = await agent.invoke(go, thread("t1"));
    // The safe call ran in the first pass; it is never repeated by the resumes below.
    expect(rt.calls).toEqual({ "search:d": 1 });
    for (const query of ["b", "c", "a"]) {
      const before = interruptsOf(state).length;
      state = await agent.invoke(resume([[cardFor(state, query), { decision: "allow_once" }]]), thread("t1"));
      expect(interruptsOf(state)).toHaveLength(before - 1);
    }
    expect(rt.calls).toEqual({ "search:d": 1, "write:a": 1, "write:b": 1, "delete:c": 1 });
    expect(await rt.governance.ledger.query()).toHaveLength(4);
    // A stray resume after the end changes nothing.
    await agent.invoke(resumeNothing(), thread("t1"));
    expect(rt.calls).toEqual({ "search:d": 1, "write:a": 1, "write:b": 1, "delete:c": 1 });
  });

  test("revoking a grant asks again", async () => {
    const rt = await lab();
    const first = labAgent(rt, [[{ tool: "write", query: "a" }]]);
    const paused = await first.invoke(go, thread("t1"));
    await first.invoke(resume([[cardFor(paused, "a"), { decision: "allow_matching" }]]), thread("t1"));
    const covered = await labAgent(rt, [[{ tool: "write", query: "b" }]]).invoke(go, thread("t1"));
    expect(interruptsOf(covered)).toEqual([]);
    const [grant] = await rt.governance.permissions.listGrants({ sessionId: "t1" });
    await rt.governance.permissions.revokeGrant(grant?.id as string);
    const asked = await labAgent(rt, [[{ tool: "write", query: "c" }]]).invoke(go, thread("t1"));
    expect(interruptsOf(asked).map((i) => i.value?.args.query)).toEqual(["c"]);
    expect(rt.calls).toEqual({ "write:a": 1, "write:b": 1 });
  });

  test("a changed tool definition asks again despite the grant", async () => {
    const rt = await lab();
    const first = labAgent(rt, [[{ tool: "write", query: "a" }]]);
    const paused = await first.invoke(go, thread("t1"));
    await first.invoke(resume([[cardFor(paused, "a"), { decision: "allow_matching" }]]), thread("t1"));
    await rt.changeDescription("write", "Writes, now differently.");
    const asked = await labAgent(rt, [[{ tool: "write", query: "b" }]]).invoke(go, thread("t1"));
    expect(interruptsOf(asked).map((i) => i.value?.args.query)).toEqual(["b"]);
    expect(rt.calls).toEqual({ "write:a": 1 });
  });

  test("a cache hit still needs permission", async () => {
    const rt = await lab({ strict: true });
    for (const threadId of ["t1", "t2"]) {
      const agent = labAgent(rt, [[{ tool: "search", query: "x" }]]);
      const paused = await agent.invoke(go, thread(threadId));
      expect(interruptsOf(paused)).toHaveLength(1);
      await agent.invoke(resume([[cardFor(paused, "x"), { decision: "allow_once" }]]), thread(threadId));
    }
    expect(rt.calls).toEqual({ "search:x": 1 });
    const rows = await rt.governance.ledger.query();
    expect(rows.map((r) => [r.cacheHit, r.authorizationId !== undefined])).toEqual([
      [false, true],
      [true, true],
    ]);
  });

  test("a card unanswered past the wait timeout counts as denied when its task next runs, audited once", async () => {
    const rt = await lab();
    const gate = createApprovalGate({ governance: rt.governance, waitTimeoutMs: 60_000 });
    const agent = labAgent(
      rt,
      [
        [
          { tool: "write", query: "late" },
          { tool: "write", query: "quick" },
        ],
      ],
      gate,
    );
    const paused = await agent.invoke(go, thread("t1"));
    await rt.clock.advance(30_000);
    const half = await agent.invoke(
      resume([[cardFor(paused, "quick"), { decision: "allow_once" }]]),
      thread("t1"),
    );
    expect(interruptsOf(half).map((i) => i.value?.args.query)).toEqual(["late"]);
    await rt.clock.advance(30_000);
    const done = await agent.invoke(resumeNothing(), thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(bodyOf(toolResults(done).get("late"))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("nobody answered"),
    });
    expect(rt.calls).toEqual({ "write:quick": 1 });
    expect((await decisionSources(rt)).sort()).toEqual(["user_once", "wait_timeout"]);
  });

  test("cancelPending marks a thread's open cards cancelled, each audited exactly once", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "delete", query: "b" },
      ],
    ]);
    await agent.invoke(go, thread("t1"));
    const other = labAgent(rt, [[{ tool: "write", query: "z" }]]);
    await other.invoke(go, thread("t2"));
    const { permissions } = rt.governance;
    const cancelled = await permissions.cancelPending("t1", "the user closed the tab");
    expect(cancelled.map((p) => [p.card.args.query, p.state]).sort()).toEqual([
      ["a", "cancelled"],
      ["b", "cancelled"],
    ]);
    expect(await permissions.cancelPending("t1")).toEqual([]);
    expect(permissions.listPending().map((p) => p.card.args.query)).toEqual(["z"]);
    expect(await decisionSources(rt)).toEqual(["cancelled", "cancelled"]);
    // Should the abandoned run be resumed after all, nothing runs and nothing new is recorded.
    const done = await agent.invoke(resumeNothing(), thread("t1"));
    expect(bodyOf(toolResults(done).get("a"))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("the user closed the tab"),
    });
    expect(rt.calls).toEqual({});
    expect(await decisionSources(rt)).toEqual(["cancelled", "cancelled"]);
  });

  test("the gate refuses to work with a broker that does not enforce permissions", async () => {
    const rt = await lab();
    expect(() =>
      createApprovalGate({ governance: { ...rt.governance, permissionsEnforced: false } }),
    ).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});
