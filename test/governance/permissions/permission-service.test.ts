import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { LedgerWriter } from "../../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import type { AuthorizationRequest } from "../../../src/governance/permissions/authorization.js";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import {
  PermissionService,
  type PermissionServiceOptions,
} from "../../../src/governance/permissions/permission-service.js";
import {
  type PermissionPolicy,
  permissionDecisionSchema,
} from "../../../src/governance/permissions/permission-types.js";
import { SessionSettings } from "../../../src/governance/permissions/session-settings.js";
import { MemorySessionStateStore } from "../../../src/governance/permissions/session-state-store.js";
import { grantStorePath, SqliteGrantStore } from "../../../src/governance/permissions/sqlite-grant-store.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { type CallSpec, DOWNLOAD_TOOL, makeRequest, WRITE_TOOL } from "./permission-fixtures.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-permissions-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

function setup(options: Partial<PermissionServiceOptions> = {}) {
  const ledger = new MemoryLedger();
  const grants = new MemoryGrantStore();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const service = new PermissionService({
    ledgerWriter: new LedgerWriter(ledger),
    grants,
    clock,
    ...options,
  });
  return { ledger, grants, clock, service };
}

const write = (spec: CallSpec = {}): AuthorizationRequest => makeRequest({ tool: WRITE_TOOL, ...spec });

describe("policy", () => {
  const onlyQuery = (verdict: "danger" | "safe" | "default"): PermissionPolicy => ({
    isDangerous: (r) =>
      r.input.query === "x" ? { danger: true, safe: false, default: undefined }[verdict] : undefined,
  });
  test.each<[string, CallSpec, PermissionPolicy, "allow" | "ask", string]>([
    ["read-only tool of a public source", {}, {}, "allow", "policy_not_dangerous"],
    ["tool not declared read-only", { tool: WRITE_TOOL }, {}, "ask", "write"],
    [
      "private source",
      { source: { governance: { ...privateGovernance("private") } } },
      {},
      "ask",
      "private-data",
    ],
    [
      "controlled source",
      { source: { governance: { ...privateGovernance("controlled") } } },
      {},
      "ask",
      "private-data",
    ],
    ["artifact_download built-in", { tool: DOWNLOAD_TOOL, input: {} }, {}, "ask", "download"],
    [
      "action starting with artifact",
      {
        tool: {
          permission: { action: "artifact:fetch", resourceTemplate: "artifact:demo", summaryTemplate: "s" },
        },
      },
      {},
      "ask",
      "download",
    ],
    [
      "artifact-plan tool only lists candidates",
      { tool: { kind: "artifact-plan" } },
      {},
      "allow",
      "policy_not_dangerous",
    ],
    ["strict policy on a read-only call", {}, { strict: true }, "ask", "read"],
    [
      "strict wins over a predicate saying safe",
      {},
      { strict: true, isDangerous: () => false },
      "ask",
      "read",
    ],
    ["predicate marks a read call dangerous", { input: { query: "x" } }, onlyQuery("danger"), "ask", "read"],
    [
      "predicate clears a write call",
      { tool: WRITE_TOOL, input: { query: "x" } },
      onlyQuery("safe"),
      "allow",
      "policy_not_dangerous",
    ],
    [
      "predicate undefined falls back to the default rule",
      { tool: WRITE_TOOL, input: { query: "y" } },
      onlyQuery("safe"),
      "ask",
      "write",
    ],
  ])("%s", async (_name, spec, policy, outcome, detail) => {
    const { service } = setup({ policy });
    const verdict = await service.evaluate(makeRequest(spec));
    expect(verdict.outcome).toBe(outcome);
    if (verdict.outcome === "allow") expect(verdict.decisionSource).toBe(detail);
    else expect(verdict.card.risk).toBe(detail);
  });

  test("always_allow lets a dangerous call through with an always_allow row; switching back asks again", async () => {
    const { service, ledger } = setup();
    service.setApprovalMode("s1", "always_allow");
    expect(service.approvalMode("s1")).toBe("always_allow");
    expect(service.approvalMode("s2")).toBe("ask_for_dangerous");
    expect(await service.evaluate(write())).toEqual({ outcome: "allow", decisionSource: "always_allow" });
    const decision = await service.authorize(write());
    expect(decision.allowed).toBe(true);
    expect(await ledger.listAuthorizations()).toMatchObject([
      { id: decision.authorizationId, decisionSource: "always_allow", action: "demo:write" },
    ]);
    service.setApprovalMode("s1", "ask_for_dangerous");
    expect((await service.authorize(write({ toolCallId: "call-2" }))).allowed).toBe(false);
  });

  test("listApprovalModes lists the sessions whose mode was set, also through allow_always", async () => {
    const state = new MemorySessionStateStore();
    const { service } = setup({ state });
    const sessions = new SessionSettings({ state });
    expect(service.listApprovalModes()).toEqual([]);
    await service.setApprovalMode("s2", "always_allow");
    await sessions.disableSource("s3", "pubmed");
    await service.decide(write({ sessionId: "s1" }), { decision: "allow_always" });
    await service.setApprovalMode("s2", "ask_for_dangerous");
    expect(service.listApprovalModes()).toEqual([
      { sessionId: "s1", mode: "always_allow" },
      { sessionId: "s2", mode: "ask_for_dangerous" },
    ]);
    expect(service.listApprovalModes({ sessionId: "s2" })).toEqual([
      { sessionId: "s2", mode: "ask_for_dangerous" },
    ]);
    // s3 has a switch but no mode: it is not listed here, and keeps the default.
    expect(service.listApprovalModes({ sessionId: "s3" })).toEqual([]);
    expect(sessions.listSourceSwitches()).toEqual([{ sessionId: "s3", sourceId: "pubmed", enabled: false }]);
  });

  test("listSourceSwitches lists each session's switches; isShared says the memory store is this process only", async () => {
    const sessions = new SessionSettings();
    await sessions.enableSource("b", "llm-wiki");
    await sessions.disableSource("a", "pubmed");
    await sessions.disableSource("a", "arxiv");
    await sessions.enableSource("a", "arxiv");
    expect(sessions.listSourceSwitches()).toEqual([
      { sessionId: "a", sourceId: "arxiv", enabled: true },
      { sessionId: "a", sourceId: "pubmed", enabled: false },
      { sessionId: "b", sourceId: "llm-wiki", enabled: true },
    ]);
    expect(sessions.listSourceSwitches({ sessionId: "b" })).toEqual([
      { sessionId: "b", sourceId: "llm-wiki", enabled: true },
    ]);
    expect(sessions.isSourceEnabled("a", { id: "pubmed", enabledByDefault: true })).toBe(false);
    expect(sessions.isShared).toBe(false);
  });

  test("an unknown approval mode is INVALID_INPUT", () => {
    const { service } = setup();
    expect(() => service.setApprovalMode("s1", "yolo" as "always_allow")).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});

function privateGovernance(dataClassification: "private" | "controlled") {
  return {
    attribution: "Wiki",
    license: "internal",
    termsUrl: "https://example.org/terms",
    dataClassification,
    networkHosts: [],
    maxResponseBytes: 1000,
    rateLimitGroup: "wiki",
  };
}

describe("cards", () => {
  test("a card names action, rendered resource, summary with the real query, source, tool and risk", async () => {
    const { service } = setup();
    const verdict = await service.evaluate(write({ input: { query: "drop table" } }));
    expect(verdict).toEqual({
      outcome: "ask",
      card: {
        type: "permission",
        requestId: expect.stringMatching(/^perm-[0-9a-f]{32}$/),
        action: "demo:write",
        resource: "demo:write:drop table",
        summary: 'Write "drop table"',
        matchingScope: {
          resource: "demo:write",
          description: "every demo:write call, whatever its arguments, for the rest of this session",
        },
        sourceId: "demo",
        toolId: "write",
        toolCallId: "call-1",
        args: { query: "drop table" },
        risk: "write",
        allowedDecisions: ["allow_once", "allow_matching", "allow_always", "deny"],
      },
    });
  });

  test("the request id is stable for one call and differs between calls", async () => {
    const { service } = setup();
    const id = async (spec: CallSpec) => {
      const verdict = await service.evaluate(write(spec));
      return verdict.outcome === "ask" ? verdict.card.requestId : "";
    };
    expect(await id({})).toBe(await id({}));
    expect(await id({})).not.toBe(await id({ toolCallId: "call-2" }));
    expect(await id({})).not.toBe(await id({ input: { query: "other" } }));
  });

  test.each([
    [{ decision: "allow_once" }, true],
    [{ decision: "deny", message: "no" }, true],
    [{ decision: "always" }, false],
    [{ decision: "allow_once", extra: 1 }, false],
    ["allow_once", false],
  ])("the decision schema: %j valid=%s", (value, valid) => {
    expect(permissionDecisionSchema.safeParse(value).success).toBe(valid);
  });
});

describe("authorize and decide", () => {
  test("a call that is not dangerous is allowed with one policy_not_dangerous row", async () => {
    const { service, ledger } = setup();
    const decision = await service.authorize(makeRequest());
    // Nobody decided: the row is left to the broker, which writes it in the call's row's commit.
    expect(decision).toEqual({
      allowed: true,
      authorizationId: expect.any(String),
      commit: expect.any(Function),
      ready: expect.any(Function),
    });
    await (decision.allowed && decision.ready?.());
    expect(await ledger.listAuthorizations()).toEqual([]);
    await (decision.allowed && decision.commit?.());
    expect(await ledger.listAuthorizations()).toEqual([
      {
        id: decision.authorizationId,
        sessionId: "s1",
        threadId: "t1",
        toolCallId: "call-1",
        sourceId: "demo",
        toolId: "search",
        action: "demo:search",
        resource: "demo:search",
        decisionSource: "policy_not_dangerous",
        createdAt: "2026-01-01T00:00:00.000Z",
        epoch: 1,
      },
    ]);
  });

  test("a dangerous call without cover is denied with 'approval required' and records nothing", async () => {
    const { service, ledger } = setup();
    const decision = await service.authorize(write());
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.reason).toMatch(/^approval required: Write "brca1"/);
    expect(decision.reason).toContain("tool call 'call-1'");
    // It names what the app can do, not an internal method.
    expect(decision.reason).toContain("checkpointer");
    expect(decision.reason).toContain("always_allow");
    expect(decision.reason).not.toContain("PermissionService");
    expect(await ledger.listAuthorizations()).toEqual([]);
    expect(await service.epoch("s1")).toBe(0);
  });

  test("allow_once authorizes its call exactly once and covers no other call", async () => {
    const { service, ledger, grants } = setup();
    const { authorizationId, decisionSource, grant } = await service.decide(write(), {
      decision: "allow_once",
    });
    expect(decisionSource).toBe("user_once");
    expect(grant).toBeUndefined();
    expect(await service.authorize(write())).toEqual({ allowed: true, authorizationId });
    expect((await service.authorize(write())).allowed).toBe(false);
    expect((await service.authorize(write({ toolCallId: "call-2" }))).allowed).toBe(false);
    expect(await grants.list()).toEqual([]);
    expect((await ledger.listAuthorizations()).map((a) => a.decisionSource)).toEqual(["user_once"]);
  });

  test("a decision is not used for a call with other arguments under the same tool call id", async () => {
    const { service } = setup();
    await service.decide(write(), { decision: "allow_once" });
    expect((await service.authorize(write({ input: { query: "something else" } }))).allowed).toBe(false);
  });

  test("allow_matching grants the normalized resource: later calls pass as existing_grant, other resources ask", async () => {
    const { service, ledger } = setup();
    const download = (toolCallId: string, sourceId: string, candidateId: string) =>
      makeRequest({
        tool: DOWNLOAD_TOOL,
        toolCallId,
        input: { sourceId, candidateId, destinationPath: `papers/${candidateId}.pdf` },
      });
    const first = await service.decide(download("c1", "arxiv", "p1"), { decision: "allow_matching" });
    expect(first.grant).toMatchObject({
      sessionId: "s1",
      action: "artifact:download",
      resource: "artifact:arxiv",
      toolDefinitionHash: "def-1",
      createdAt: "2026-01-01T00:00:00.000Z",
    });
    expect(await service.authorize(download("c1", "arxiv", "p1"))).toEqual({
      allowed: true,
      authorizationId: first.authorizationId,
    });
    expect((await service.authorize(download("c2", "arxiv", "p2"))).allowed).toBe(true);
    expect((await service.authorize(download("c3", "biorxiv", "p3"))).allowed).toBe(false);
    expect((await service.authorize(download("c4", "arxiv", "p4"))).allowed).toBe(true);
    const rows = await ledger.listAuthorizations();
    expect(rows.map((r) => [r.toolCallId, r.decisionSource, r.resource])).toEqual([
      ["c1", "user_grant", "artifact:arxiv"],
      ["c2", "existing_grant", "artifact:arxiv"],
      ["c4", "existing_grant", "artifact:arxiv"],
    ]);
    expect(await service.listGrants({ sessionId: "s1" })).toEqual([first.grant]);
    expect(await service.listGrants({ sessionId: "s2" })).toEqual([]);
  });

  test("a grant covers only its session", async () => {
    const { service } = setup();
    await service.decide(write(), { decision: "allow_matching" });
    expect((await service.authorize(write({ toolCallId: "c2" }))).allowed).toBe(true);
    expect((await service.authorize(write({ sessionId: "s2", threadId: "t2" }))).allowed).toBe(false);
  });

  test("deny refuses its call with the human's message, records user_deny and affects no other call", async () => {
    const { service, ledger } = setup();
    const { authorizationId } = await service.decide(write(), {
      decision: "deny",
      message: "use the sandbox",
    });
    expect(await service.authorize(write())).toEqual({
      allowed: false,
      authorizationId,
      reason: "denied by the user: use the sandbox",
    });
    await service.decide(write({ toolCallId: "c2" }), { decision: "allow_once" });
    expect((await service.authorize(write({ toolCallId: "c2" }))).allowed).toBe(true);
    expect((await ledger.listAuthorizations()).map((a) => a.decisionSource)).toEqual([
      "user_deny",
      "user_once",
    ]);
  });

  test("a malformed decision or a request without toolCallId is INVALID_INPUT and records nothing", async () => {
    const { service, ledger } = setup();
    await expect(service.decide(write(), { decision: "maybe" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    const { toolCallId: _omit, ...withoutCall } = write();
    await expect(service.decide(withoutCall, { decision: "allow_once" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(await ledger.listAuthorizations()).toEqual([]);
  });

  test("recording the same decision twice for a waiting call keeps one row", async () => {
    const { service, ledger } = setup();
    const a = await service.decide(write(), { decision: "allow_once" });
    const b = await service.decide(write(), { decision: "allow_once" });
    expect(b).toEqual(a);
    expect(await ledger.listAuthorizations()).toHaveLength(1);
  });

  test("100 calls in always_allow make 0 grants and 100 authorization rows with epochs 1..100", async () => {
    const { service, ledger, grants } = setup();
    service.setApprovalMode("s1", "always_allow");
    for (let i = 0; i < 100; i++) {
      expect((await service.authorize(write({ toolCallId: `c${i}` }))).allowed).toBe(true);
    }
    expect(await grants.list()).toEqual([]);
    const rows = await ledger.listAuthorizations({ sessionId: "s1" });
    expect(rows).toHaveLength(100);
    expect(new Set(rows.map((r) => r.decisionSource))).toEqual(new Set(["always_allow"]));
    expect(rows.map((r) => r.epoch)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(100);
  });

  test("every authorization rotates its session's epoch; sessions count separately", async () => {
    const { service, ledger } = setup();
    // A safe call's row is the caller's to write (the broker does, with the invocation row).
    const authorizeAndCommit = async (request: AuthorizationRequest) => {
      const decision = await service.authorize(request);
      if (decision.allowed) await decision.commit?.();
    };
    await authorizeAndCommit(makeRequest());
    await service.decide(write({ toolCallId: "c2" }), { decision: "deny" });
    await authorizeAndCommit(makeRequest({ sessionId: "s2", toolCallId: "c3" }));
    await service.decide(write({ toolCallId: "c4" }), { decision: "allow_matching" });
    expect((await ledger.listAuthorizations()).map((a) => [a.sessionId, a.epoch])).toEqual([
      ["s1", 1],
      ["s1", 2],
      ["s2", 1],
      ["s1", 3],
    ]);
    expect(await service.epoch("s1")).toBe(3);
  });

  test("two concurrent allow_matching decisions for one resource create one grant", async () => {
    const { service, ledger } = setup();
    const [a, b] = await Promise.all([
      service.decide(write({ toolCallId: "c1", input: { query: "a" } }), { decision: "allow_matching" }),
      service.decide(write({ toolCallId: "c2", input: { query: "b" } }), { decision: "allow_matching" }),
    ]);
    expect(a.grant?.id).toBe(b.grant?.id);
    expect(await service.listGrants()).toHaveLength(1);
    expect(await ledger.listAuthorizations()).toHaveLength(2);
  });

  test("revoking a grant makes matching calls ask again; an unknown id is UNKNOWN_ID", async () => {
    const { service } = setup();
    const { grant } = await service.decide(write(), { decision: "allow_matching" });
    expect((await service.authorize(write({ toolCallId: "c2" }))).allowed).toBe(true);
    expect(await service.revokeGrant(grant?.id ?? "")).toEqual(grant);
    expect((await service.authorize(write({ toolCallId: "c3" }))).allowed).toBe(false);
    await expect(service.revokeGrant(grant?.id ?? "")).rejects.toMatchObject({ code: "UNKNOWN_ID" });
  });

  test("a grant does not cover a changed tool definition", async () => {
    const { service } = setup();
    await service.decide(write(), { decision: "allow_matching" });
    expect((await service.authorize(write({ toolCallId: "c2" }))).allowed).toBe(true);
    const changed = await service.evaluate(write({ toolCallId: "c3", definitionHash: "def-2" }));
    expect(changed.outcome).toBe("ask");
    expect((await service.authorize(write({ toolCallId: "c3", definitionHash: "def-2" }))).allowed).toBe(
      false,
    );
  });

  test("a throwing predicate propagates, so the broker denies the call", async () => {
    const { service } = setup({
      policy: {
        isDangerous: () => {
          throw new Error("policy bug");
        },
      },
    });
    await expect(service.authorize(makeRequest())).rejects.toThrow("policy bug");
  });
});

describe("persistence", () => {
  test("a grant is honoured by a second service over the same SQLite data directory", async () => {
    const dataDir = join(scratch, "data");
    const open = async () => {
      const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
      const grants = await SqliteGrantStore.open(grantStorePath(dataDir));
      return {
        ledger,
        grants,
        service: new PermissionService({ ledgerWriter: new LedgerWriter(ledger), grants }),
      };
    };
    const first = await open();
    const { grant } = await first.service.decide(write(), { decision: "allow_matching" });
    await Promise.all([first.ledger.close(), first.grants.close()]);

    const second = await open();
    expect(await second.service.listGrants()).toEqual([grant]);
    const decision = await second.service.authorize(write({ toolCallId: "c2" }));
    expect(decision.allowed).toBe(true);
    const rows = await second.ledger.listAuthorizations();
    expect(rows.map((r) => [r.decisionSource, r.epoch])).toEqual([
      ["user_grant", 1],
      ["existing_grant", 2],
    ]);
    await second.service.revokeGrant(grant?.id ?? "");
    expect((await second.service.authorize(write({ toolCallId: "c3" }))).allowed).toBe(false);
    await Promise.all([second.ledger.close(), second.grants.close()]);
  });
});

describe("pending cards", () => {
  test("a replica remembers at most 10,000 cards: the oldest is forgotten first", () => {
    const { service } = setup();
    for (let i = 0; i <= 10_000; i++) service.notePending(write({ toolCallId: `call-${i}` }));
    const open = service.listPending();
    expect(open).toHaveLength(10_000);
    expect(service.pendingFor(write({ toolCallId: "call-0" }))).toBeUndefined();
    expect(service.pendingFor(write({ toolCallId: "call-10000" }))?.state).toBe("open");
    // Noting a forgotten card again starts its wait again.
    expect(service.notePending(write({ toolCallId: "call-0" })).state).toBe("open");
    expect(service.pendingFor(write({ toolCallId: "call-1" }))).toBeUndefined();
  });
});

describe("out-of-band grants and one call's cancellation", () => {
  test("grant() records what allow_matching records, without a call: one grant and one user_grant row without a tool call id", async () => {
    const { service, ledger } = setup();
    const { toolCallId: _none, ...outside } = write({});
    const { grant, authorizationId } = await service.grant(outside);
    expect(grant).toMatchObject({ sessionId: "s1", action: "demo:write", resource: "demo:write" });
    const [row] = await ledger.listAuthorizations();
    expect(row).toMatchObject({ id: authorizationId, decisionSource: "user_grant", epoch: 1 });
    expect(row?.toolCallId).toBeUndefined();
    expect(await service.evaluate(write({ toolCallId: "later" }))).toEqual({
      outcome: "allow",
      decisionSource: "existing_grant",
    });
    // An explicit scope is the grant's key as given.
    expect((await service.grant(outside, "demo:write:elsewhere")).grant.resource).toBe(
      "demo:write:elsewhere",
    );
  });

  test("cancelPending with a toolCallId ends only that call's card; its sibling stays open", async () => {
    const { service, ledger } = setup();
    service.notePending(write({ toolCallId: "a" }));
    service.notePending(write({ toolCallId: "b" }));
    const cancelled = await service.cancelPending("t1", "the client cancelled it", { toolCallId: "a" });
    expect(cancelled.map((p) => p.card.toolCallId)).toEqual(["a"]);
    expect(service.listPending().map((p) => p.card.toolCallId)).toEqual(["b"]);
    expect((await ledger.listAuthorizations()).map((r) => [r.toolCallId, r.decisionSource])).toEqual([
      ["a", "cancelled"],
    ]);
    expect(await service.authorize(write({ toolCallId: "a" }))).toMatchObject({
      allowed: false,
      reason: "the approval request was cancelled: the client cancelled it",
    });
  });
});
