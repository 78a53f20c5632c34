import { describe, expect, test } from "vitest";
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

describe("approval gate: cards through LangGraph", () => {
  test("three parallel dangerous calls give three cards at once, with the card payload, and nothing runs", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "write", query: "b" },
        { tool: "delete", query: "c" },
      ],
    ]);
    const paused = await agent.invoke(go, thread("t1"));
    const cards = interruptsOf(paused);
    expect(cards).toHaveLength(3);
    expect(new Set(cards.map((c) => c.id)).size).toBe(3);
    expect(cardFor(paused, "c").value).toMatchObject({
      type: "permission",
      action: "lab:delete",
      resource: "lab:delete:c",
      summary: 'delete "c" in the lab',
      sourceId: "lab",
      toolId: "delete",
      args: { query: "c" },
      risk: "write",
      allowedDecisions: ["allow_once", "allow_matching", "allow_always", "deny"],
      matchingScope: { resource: "lab:delete" },
    });
    expect(cardFor(paused, "c").value?.requestId).toMatch(/^perm-/);
    expect(cardFor(paused, "c").value?.toolCallId).toEqual(expect.any(String));
    // The resume value's schema travels with the card, for clients that render a form.
    expect(cards[0]?.response_schema).toMatchObject({
      anyOf: [{ required: ["decision"] }, { required: ["decisions"] }],
    });
    expect(rt.calls).toEqual({});
    expect(rt.governance.permissions.listPending({ threadId: "t1" })).toHaveLength(3);
  });

  test("allow_matching on one card releases the other of its type without a card and leaves the third pending", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "write", query: "b" },
        { tool: "delete", query: "c" },
      ],
    ]);
    const paused = await agent.invoke(go, thread("t1"));
    const next = await agent.invoke(
      resume([[cardFor(paused, "a"), { decision: "allow_matching" }]]),
      thread("t1"),
    );
    const left = interruptsOf(next);
    expect(left.map((i) => i.value?.args.query)).toEqual(["c"]);
    // The same card (same interrupt id) still waits: nothing new was asked.
    expect(left[0]?.id).toBe(cardFor(paused, "c").id);
    expect(rt.calls).toEqual({ "write:a": 1, "write:b": 1 });
    const grants = await rt.governance.permissions.listGrants({ sessionId: "t1" });
    expect(grants.map((g) => [g.action, g.resource])).toEqual([["lab:write", "lab:write"]]);
    expect((await decisionSources(rt)).sort()).toEqual(["existing_grant", "user_grant"]);

    const done = await agent.invoke(resume([[left[0] as never, { decision: "allow_once" }]]), thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(rt.calls).toEqual({ "write:a": 1, "write:b": 1, "delete:c": 1 });
  });

  test("deny affects only its call: a structured PERMISSION_DENIED with the human's message, audited", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "write", query: "b" },
      ],
    ]);
    const paused = await agent.invoke(go, thread("t1"));
    const done = await agent.invoke(
      resume([
        [cardFor(paused, "a"), { decision: "deny", message: "not on production data" }],
        [cardFor(paused, "b"), { decision: "allow_once" }],
      ]),
      thread("t1"),
    );
    const results = toolResults(done);
    expect(results.get("a")?.status).toBe("error");
    expect(bodyOf(results.get("a"))).toMatchObject({
      code: "PERMISSION_DENIED",
      retryable: false,
      message: expect.stringContaining("not on production data"),
    });
    expect(results.get("b")?.status).not.toBe("error");
    expect(bodyOf(results.get("b"))).toMatchObject({ sourceId: "lab", toolId: "write" });
    expect(rt.calls).toEqual({ "write:b": 1 });
    const denied = (await rt.governance.ledger.query({ status: "error" }))[0];
    const auths = await rt.governance.ledger.listAuthorizations();
    const deny = auths.find((a) => a.decisionSource === "user_deny");
    expect(denied).toMatchObject({ toolCallId: deny?.toolCallId, error: { code: "PERMISSION_DENIED" } });
    expect(denied?.authorizationId).toBe(deny?.id);
    expect(auths.map((a) => a.decisionSource).sort()).toEqual(["user_deny", "user_once"]);
    // allow_once leaves no grant behind.
    expect(await rt.governance.permissions.listGrants()).toEqual([]);
  });

  test("always_allow resolves every pending call on the next resume; switching back asks again", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [
      [
        { tool: "write", query: "a" },
        { tool: "delete", query: "b" },
      ],
      [{ tool: "write", query: "c" }],
    ]);
    const paused = await agent.invoke(go, thread("t1"));
    expect(interruptsOf(paused)).toHaveLength(2);
    rt.governance.permissions.setApprovalMode("t1", "always_allow");
    // The second turn's call runs without a card as well.
    const done = await agent.invoke(resumeNothing(), thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(rt.calls).toEqual({ "write:a": 1, "delete:b": 1, "write:c": 1 });
    expect(await decisionSources(rt)).toEqual(["always_allow", "always_allow", "always_allow"]);

    rt.governance.permissions.setApprovalMode("t1", "ask_for_dangerous");
    const again = labAgent(rt, [[{ tool: "write", query: "d" }]]);
    expect(interruptsOf(await again.invoke(go, thread("t1")))).toHaveLength(1);
  });

  test("100 calls in always_allow make 0 cards, 0 grants and 100 authorizations", async () => {
    const rt = await lab();
    rt.governance.permissions.setApprovalMode("t1", "always_allow");
    const calls = Array.from({ length: 100 }, (_, i) => ({ tool: "write" as const, query: `q${i}` }));
    const done = await labAgent(rt, [calls]).invoke(go, thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(Object.keys(rt.calls)).toHaveLength(100);
    expect(await rt.governance.permissions.listGrants()).toEqual([]);
    const auths = await rt.governance.ledger.listAuthorizations();
    expect(auths).toHaveLength(100);
    expect(new Set(auths.map((a) => a.decisionSource))).toEqual(new Set(["always_allow"]));
    expect(new Set(auths.map((a) => a.resource))).toEqual(new Set(["lab:write"]));
  });

  test("safe calls run without a card and leave a policy_not_dangerous row", async () => {
    const rt = await lab();
    const done = await labAgent(rt, [[{ tool: "search", query: "x" }]]).invoke(go, thread("t1"));
    expect(interruptsOf(done)).toEqual([]);
    expect(rt.calls).toEqual({ "search:x": 1 });
    expect(await decisionSources(rt)).toEqual(["policy_not_dangerous"]);
  });
});
