/**
 * Two replicas (two governance runtimes, each with its own pool, ledger and session state store) over
 * one real PostgreSQL database: what one replica's human or app decides applies on the other.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { isGovernanceError, openPostgres, type PostgresDatabase } from "../../src/core/index.js";
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
import { startTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Two lab replicas sharing one database's session state and one MCP call counter. */
async function replicas(): Promise<{
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
    const rt = await createLabRuntime({}, { sessionState: await openSharedSessionState(db), calls });
    // The runtime closes its session state before the database closes.
    closers.push(() => rt.governance.close());
    return rt;
  };
  return { a: await open(), b: await open(), calls, url };
}

const write = (query: string, extra: { toolCallId?: string; threadId?: string } = {}) => ({
  sourceId: "lab",
  toolId: "write",
  input: { query },
  session: "s1",
  ...extra,
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: unknown) => (isGovernanceError(error) ? error.code : String(error)),
  );

const converged = { timeout: 5_000, interval: 20 };

describe("session state shared by two replicas on one PostgreSQL", () => {
  test("a source switched off on A is refused on B, and its tools leave B's surface", async () => {
    const { a, b, calls } = await replicas();
    expect(b.governance.tools("s1").some((t) => t.sourceId === "lab")).toBe(true);
    await a.governance.sessions.disableSource("s1", "lab");
    await vi.waitFor(
      () => expect(b.governance.tools("s1").some((t) => t.sourceId === "lab")).toBe(false),
      converged,
    );
    const search = { sourceId: "lab", toolId: "search", input: { query: "x" }, session: "s1" };
    expect(await codeOf(b.governance.broker.invoke(search))).toBe("SOURCE_DISABLED");
    expect(calls).toEqual({});
    // Another session is untouched.
    expect(await codeOf(b.governance.broker.invoke({ ...search, session: "s2" }))).toBe("ran");
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

  test("a decision recorded on A runs its call exactly once when A and B both try it", async () => {
    const { a, b, calls } = await replicas();
    const call = write("once", { toolCallId: "call-1", threadId: "s1" });
    const request = createAuthorizationRequest(a.governance.catalog, call);
    const decided = await a.governance.permissions.decide(request, { decision: "allow_once" });
    const outcomes = await Promise.all([
      codeOf(a.governance.broker.invoke(call)),
      codeOf(b.governance.broker.invoke(call)),
    ]);
    expect([...outcomes].sort()).toEqual(["PERMISSION_DENIED", "ran"]);
    expect(calls).toEqual({ "write:once": 1 });
    // The replica that ran it used the human's authorization.
    const ranOn = outcomes.indexOf("ran") === 0 ? a : b;
    await vi.waitFor(async () => {
      const row = await ranOn.governance.ledger.findByCall("s1", "call-1");
      expect(row?.authorizationId).toBe(decided.authorizationId);
    }, converged);
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
    const later = { ...write("b"), session: "t1" };
    expect(await codeOf(a.governance.broker.invoke(later))).toBe("ran");
    expect(calls).toEqual({ "write:a": 1, "write:b": 1 });
  });
});
