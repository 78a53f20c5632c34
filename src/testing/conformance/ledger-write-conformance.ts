/**
 * The part of the ledger contract about writing: a store's batch append (one commit, each write refused
 * on its own, `again` for a batch whose first answer was lost, the synchronous exit variant) and text a
 * third party controls stored exactly, NUL characters, lone surrogates and U+FFFF included, in every
 * column, found again by every filter and by the text search.
 */
import { expect, test } from "vitest";
import { jsonObject } from "../../governance/audit/content-object.js";
import type {
  AuthorizationRecord,
  InvocationRecord,
  LedgerWrite,
  LedgerWriteResult,
} from "../../governance/audit/index.js";
import type { LedgerUnderTest } from "./ledger-under-test.js";

let counter = 0;
function row(overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  counter += 1;
  return {
    invocationId: `write-inv-${counter}`,
    sessionId: "s-write",
    sourceId: "pubmed",
    toolId: "search",
    status: "ok",
    startedAt: new Date(Date.UTC(2025, 7, 1) + counter * 1000).toISOString(),
    finishedAt: new Date(Date.UTC(2025, 7, 1) + counter * 1000 + 5).toISOString(),
    durationMs: 5,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...overrides,
  };
}

function authorization(overrides: Partial<AuthorizationRecord> = {}): AuthorizationRecord {
  counter += 1;
  return {
    id: `write-auth-${counter}`,
    sessionId: "s-write",
    sourceId: "pubmed",
    toolId: "search",
    action: "search",
    resource: "pubmed:search",
    decisionSource: "policy_not_dangerous",
    createdAt: new Date(Date.UTC(2025, 7, 1) + counter * 1000).toISOString(),
    epoch: counter,
    ...overrides,
  };
}

/**
 * Text a hostile server or client may send: a NUL, U+FFFF and U+FFFE (noncharacters), a private-use
 * character right after U+FFFF, lone surrogates of both halves, a well-formed pair.
 */
const HOSTILE = "a\u0000b\uFFFFc\uFFFF\uE000d\uFFFEe\uD800f\uDC00g\u{1F600}h";
const hostile = (label: string) => `${label}:${HOSTILE}`;

const outcomes = (results: readonly LedgerWriteResult[]) =>
  results.map((result) => ("stored" in result ? "stored" : result.refused.code));

/**
 * Registers the write tests inside a ledger conformance suite.
 * @param open returns a fresh store with its writer, which the suite closes after the test
 */
export function ledgerWriteTests(open: () => Promise<LedgerUnderTest>): void {
  test("every text column round-trips exactly: NUL, lone surrogates and U+FFFF included", async () => {
    const ledger = await open();
    const record = row({
      invocationId: hostile("id"),
      sessionId: hostile("session"),
      threadId: hostile("thread"),
      toolCallId: hostile("call"),
      runId: hostile("run"),
      sourceId: hostile("source"),
      toolId: hostile("tool"),
      mcpToolName: hostile("mcp"),
      license: hostile("license"),
      catalogRevision: hostile("revision"),
      authorizationId: hostile("auth"),
      status: "error",
      error: { code: hostile("code"), message: hostile("message"), retryable: false, attempts: 1 },
    });
    const auth = authorization({
      id: hostile("auth"),
      sessionId: hostile("session"),
      threadId: hostile("thread"),
      toolCallId: hostile("call"),
      sourceId: hostile("source"),
      toolId: hostile("tool"),
      action: hostile("action"),
      resource: hostile("resource"),
      decisionSource: hostile("decision"),
    });
    await ledger.appendAuthorization(auth);
    await ledger.append(record);
    expect(await ledger.get(record.invocationId)).toEqual(record);
    expect(await ledger.findByCall(hostile("thread"), hostile("call"))).toEqual(record);
    expect(await ledger.findByCall(hostile("thread"), "call:a")).toBeUndefined();
    for (const filter of [
      { sessionId: hostile("session") },
      { threadId: hostile("thread") },
      { runId: hostile("run") },
      { sourceId: hostile("source") },
      { toolId: hostile("tool") },
      { errorCode: hostile("code") },
    ]) {
      expect(await ledger.query(filter), JSON.stringify(filter)).toEqual([record]);
    }
    expect(await ledger.query({ after: record.invocationId })).toEqual([]);
    const summary = await ledger.summary({ sessionId: hostile("session") });
    expect(summary.byErrorCode).toEqual({ [hostile("code")]: 1 });
    expect(summary.bySource).toEqual({ [hostile("source")]: 1 });
    const [bucket] = await ledger.activity({ bucketMs: 3_600_000 });
    expect(bucket?.sourceId).toBe(hostile("source"));
    expect(await ledger.getAuthorization(hostile("auth"))).toEqual(auth);
    expect(await ledger.listAuthorizations({ sessionId: hostile("session") })).toEqual([auth]);
  });

  test("the text search finds a NUL, and text after one, exactly", async () => {
    const ledger = await open();
    const failed = (id: string, message: string) =>
      row({
        invocationId: id,
        sessionId: "s-nul-search",
        status: "error",
        error: { code: "TOOL_FAILED", message, retryable: false, attempts: 1 },
      });
    await ledger.append(failed("nul-in-message", "disk\u0000full"));
    await ledger.append(failed("space-in-message", "disk full"));
    await ledger.append(
      row({ invocationId: "nul-in-thread", sessionId: "s-nul-search", threadId: "\u0000" }),
    );
    await ledger.append(failed("escape-in-message", "disk\uFFFFfull"));
    const found = async (text: string) =>
      (await ledger.query({ sessionId: "s-nul-search", text })).map((r) => r.invocationId);
    expect(await found("\u0000")).toEqual(["nul-in-message", "nul-in-thread"]);
    expect(await found("k\u0000f")).toEqual(["nul-in-message"]);
    expect(await found("full")).toEqual(["nul-in-message", "space-in-message", "escape-in-message"]);
    expect(await found("\uFFFF")).toEqual(["escape-in-message"]);
    expect(await ledger.count({ sessionId: "s-nul-search", text: "\u0000" })).toBe(2);
  });

  test("a batch commits every write, invocations and authorizations together, each refused alone", async () => {
    const ledger = await open();
    const { store } = ledger;
    const auth = authorization({ sessionId: "s-batch" });
    const first = row({
      sessionId: "s-batch",
      threadId: "t-batch",
      toolCallId: "c-1",
      authorizationId: auth.id,
    });
    const sameCall = row({ sessionId: "s-batch", threadId: "t-batch", toolCallId: "c-1" });
    const last = row({ sessionId: "s-batch", threadId: "t-batch", toolCallId: "c-2" });
    const objects = store.objects === undefined ? [] : [jsonObject({ result: "first" })];
    const writes: LedgerWrite[] = [
      { kind: "authorization", record: auth },
      { kind: "invocation", record: first, objects },
      { kind: "invocation", record: sameCall, objects: [] },
      { kind: "invocation", record: first, objects: [] },
      { kind: "authorization", record: auth },
      { kind: "invocation", record: last, objects: [] },
    ];
    const results = await store.appendBatch(writes);
    expect(outcomes(results)).toEqual([
      "stored",
      "stored",
      "DUPLICATE_ID",
      "DUPLICATE_ID",
      "DUPLICATE_ID",
      "stored",
    ]);
    expect(results[2]).toMatchObject({ refused: { data: { existingInvocationId: first.invocationId } } });
    expect((await ledger.query({ sessionId: "s-batch" })).map((r) => r.invocationId)).toEqual([
      first.invocationId,
      last.invocationId,
    ]);
    expect(await ledger.listAuthorizations({ sessionId: "s-batch" })).toEqual([auth]);
    if (objects[0] !== undefined) expect(await store.objects?.get(objects[0].sha256)).toBeDefined();
  });

  test("a batch sent again (its first answer lost) stores each row once", async () => {
    const ledger = await open();
    const { store } = ledger;
    const auth = authorization({ sessionId: "s-again" });
    const stored = row({ sessionId: "s-again", threadId: "t-again", toolCallId: "c-1" });
    const fresh = row({ sessionId: "s-again", threadId: "t-again", toolCallId: "c-2" });
    const twin = row({ sessionId: "s-again", threadId: "t-again", toolCallId: "c-1" });
    await store.appendBatch([
      { kind: "authorization", record: auth },
      { kind: "invocation", record: stored, objects: [] },
    ]);
    const again = await store.appendBatch(
      [
        { kind: "authorization", record: auth },
        { kind: "invocation", record: stored, objects: [] },
        { kind: "invocation", record: fresh, objects: [] },
        { kind: "invocation", record: twin, objects: [] },
      ],
      { again: true },
    );
    // Its own id recorded means an earlier attempt stored it; another row under its call key is another call.
    expect(outcomes(again)).toEqual(["stored", "stored", "stored", "DUPLICATE_ID"]);
    expect((await ledger.query({ sessionId: "s-again" })).map((r) => r.invocationId)).toEqual([
      stored.invocationId,
      fresh.invocationId,
    ]);
    expect(await ledger.listAuthorizations({ sessionId: "s-again" })).toHaveLength(1);
  });

  test("appendBatchNow (the exit step's append), when the store has it, stores a batch at once, again-safe", async () => {
    const ledger = await open();
    const { store } = ledger;
    if (store.appendBatchNow === undefined) return;
    const earlier = row({ sessionId: "s-now" });
    await ledger.append(earlier);
    const later = row({ sessionId: "s-now", mcpToolName: hostile("now") });
    const auth = authorization({ sessionId: "s-now" });
    store.appendBatchNow([
      { kind: "invocation", record: earlier, objects: [] },
      { kind: "invocation", record: later, objects: [] },
      { kind: "authorization", record: auth },
    ]);
    expect(await ledger.query({ sessionId: "s-now" })).toEqual([earlier, later]);
    expect(await ledger.listAuthorizations({ sessionId: "s-now" })).toEqual([auth]);
  });
}
