/**
 * Two replicas (two governance runtimes, each with its own pool, ledger and session state store) over
 * one real PostgreSQL database: what one replica's human or app decides applies on the other. The
 * separate-process version is `cross-process-approvals.replicas.test.ts`.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { isGovernanceError, openPostgres, type PostgresDatabase } from "../../src/core/index.js";
import { PostgresLedger } from "../../src/governance/audit/index.js";
import type { InvokeOutcome } from "../../src/governance/broker/index.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import { openSharedSessionState } from "../../src/runtime/index.js";
import {
  cardFor,
  createLabRuntime,
  go,
  interruptsOf,
  type LabRuntime,
  resume,
  thread,
  toolResults,
} from "../nodes/approval-harness.js";
import { answer, callTools, RecordingChatModel } from "../nodes/recording-chat-model.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Two lab replicas sharing one database's session state and ledger, and one MCP call counter. */
async function replicas(hold?: (key: string) => Promise<void>): Promise<{
  a: LabRuntime;
  b: LabRuntime;
  calls: Record<string, number>;
  url: string;
}> {
  const url = await server.createDatabase();
  const calls: Record<string, number> = {};
  const open = async () => {
    const db: PostgresDatabase = await openPostgres(url, { maxConnections: 3 });
    closers.push(() => db.close());
    const rt = await createLabRuntime(
      {},
      {
        sessionState: await openSharedSessionState(db),
        ledger: await PostgresLedger.open(db),
        calls,
        ...(hold ? { hold } : {}),
      },
    );
    // The runtime closes its session state before the database closes.
    closers.push(() => rt.close());
    return rt;
  };
  return { a: await open(), b: await open(), calls, url };
}

const write = (query: string, extra: { toolCallId?: string; threadId?: string } = {}) => ({
  sourceId: "lab",
  toolId: "write",
  input: { query },
  sessionId: "s1",
  ...extra,
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: unknown) => (isGovernanceError(error) ? error.code : String(error)),
  );

const converged = { timeout: 5_000, interval: 20 };

/** Settles `work` while advancing the replicas' manual clocks (a replay waits for a row by polling). */
async function advancing<T>(replicas: LabRuntime[], work: Promise<T>): Promise<T> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  while (!settled) {
    for (const rt of replicas) await rt.clock.advance(25);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return done;
}

const outcomeOf = (promise: Promise<InvokeOutcome>) =>
  promise.then(
    (outcome) => ({ invocationId: outcome.invocationId, replayed: outcome.replayed }),
    (error: unknown) => ({ code: isGovernanceError(error) ? error.code : String(error) }),
  );

describe("session state shared by two replicas on one PostgreSQL", () => {
  test("a source switched off on A is refused on B, and its tools leave B's surface", async () => {
    const { a, b, calls } = await replicas();
    expect(b.governance.tools("s1").some((t) => t.sourceId === "lab")).toBe(true);
    await a.governance.sessions.disableSource("s1", "lab");
    await vi.waitFor(
      () => expect(b.governance.tools("s1").some((t) => t.sourceId === "lab")).toBe(false),
      converged,
    );
    const search = { sourceId: "lab", toolId: "search", input: { query: "x" }, sessionId: "s1" };
    expect(await codeOf(b.governance.broker.invoke(search))).toBe("SOURCE_DISABLED");
    expect(calls).toEqual({});
    // Another session is untouched.
    expect(await codeOf(b.governance.broker.invoke({ ...search, sessionId: "s2" }))).toBe("ran");
  });

  test("always_allow set on A lets B run a dangerous call without a card", async () => {
    const { a, b, calls } = await replicas();
    expect(await codeOf(b.governance.broker.invoke(write("x")))).toBe("PERMISSION_DENIED");
    await a.governance.permissions.setApprovalMode("s1", "always_allow");
    await vi.waitFor(
      () => expect(b.governance.permissions.approvalMode("s1")).toBe("always_allow"),
      converged,
    );
    expect(await codeOf(b.governance.broker.invoke(write("x")))).toBe("ran");
    expect(calls).toEqual({ "write:x": 1 });
    const sources = (await b.governance.ledger.listAuthorizations()).map((row) => row.decisionSource);
    expect(sources).toEqual(["always_allow"]);
  });

  test("a decision recorded on A runs its call exactly once when A and B both try it; the other replays it", async () => {
    const { a, b, calls } = await replicas();
    const call = write("once", { toolCallId: "call-1", threadId: "s1" });
    const request = createAuthorizationRequest(a.governance.catalog, call);
    const decided = await a.governance.permissions.decide(request, { decision: "allow_once" });
    const outcomes = await advancing(
      [a, b],
      Promise.all([outcomeOf(a.governance.broker.invoke(call)), outcomeOf(b.governance.broker.invoke(call))]),
    );
    // Not a refusal on the replica that found the decision consumed: it waited for the row and replayed it.
    expect(outcomes.map((o) => ("replayed" in o ? o.replayed : o.code)).sort()).toEqual([false, true]);
    expect(new Set(outcomes.map((o) => ("invocationId" in o ? o.invocationId : "")))).toHaveLength(1);
    expect(calls).toEqual({ "write:once": 1 });
    const row = await b.governance.ledger.findByCall("s1", "call-1");
    expect(row).toMatchObject({ status: "ok", authorizationId: decided.authorizationId });
  });

  test("answered again on B while A runs the call: no second decision, no second run, B replays A's call", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { a, b, calls } = await replicas(() => held);
    const call = write("held", { toolCallId: "call-2", threadId: "s1" });
    const onA = createAuthorizationRequest(a.governance.catalog, call);
    const first = await a.governance.permissions.decide(onA, { decision: "allow_once" });
    const running = outcomeOf(a.governance.broker.invoke(call));
    await vi.waitFor(() => expect(calls).toEqual({ "write:held": 1 }), converged);

    // The same card resumed on B (a second submit, another replica): A consumed the decision already.
    const onB = createAuthorizationRequest(b.governance.catalog, call);
    const second = await b.governance.permissions.decide(onB, { decision: "allow_once" });
    expect(second.authorizationId).toBe(first.authorizationId);
    const replaying = outcomeOf(b.governance.broker.invoke(call));
    await advancing([a, b], new Promise((resolve) => setTimeout(resolve, 200)));
    expect(calls).toEqual({ "write:held": 1 });
    release();
    const [ran, replayed] = await advancing([a, b], Promise.all([running, replaying]));
    expect(ran).toMatchObject({ replayed: false });
    expect(replayed).toEqual({ ...ran, replayed: true });
    expect(calls).toEqual({ "write:held": 1 });
    const sources = (await b.governance.ledger.listAuthorizations()).map((row) => row.decisionSource);
    expect(sources).toEqual(["user_once"]);
  });

  test("a thread interrupted on A and resumed on B runs its call once; allow_always answered on B applies on A", async () => {
    const { a, b, calls, url } = await replicas();
    const savers = [PostgresSaver.fromConnString(url), PostgresSaver.fromConnString(url)] as const;
    closers.push(async () => {
      await Promise.all(savers.map((saver) => saver.end()));
    });
    await savers[0].setup();
    const onA = createGovernedAgent({
      model: new RecordingChatModel([
        callTools({ name: "tool_search", args: { query: "select:mcp__lab__write" } }),
        callTools({ name: "mcp__lab__write", args: { query: "a" }, id: "call-a" }),
      ]),
      governance: a.governance,
      checkpointer: savers[0],
    });
    const onB = createGovernedAgent({
      model: new RecordingChatModel([answer("done")]),
      governance: b.governance,
      checkpointer: savers[1],
    });
    const paused = await onA.invoke(go, thread("t1"));
    expect(interruptsOf(paused)).toHaveLength(1);
    expect(calls).toEqual({});

    const done = await onB.invoke(
      resume([[cardFor(paused, "a"), { decision: "allow_always" }]]),
      thread("t1"),
    );
    expect(interruptsOf(done)).toEqual([]);
    expect(toolResults(done).get("a")?.status).not.toBe("error");
    expect(calls).toEqual({ "write:a": 1 });

    // The mode the human chose on B reaches A: a later dangerous call of the thread needs no card.
    await vi.waitFor(
      () => expect(a.governance.permissions.approvalMode("t1")).toBe("always_allow"),
      converged,
    );
    const later = { ...write("b"), sessionId: "t1" };
    expect(await codeOf(a.governance.broker.invoke(later))).toBe("ran");
    expect(calls).toEqual({ "write:a": 1, "write:b": 1 });
  });
});
