/**
 * The behaviour every `LedgerStore` must show, written through the one `LedgerWriter` and read from the
 * store. Another backend (Postgres for a multi-replica deployment) runs this suite with its own factory
 * to prove it can replace the SQLite ledger.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { AuthorizationRecord, InvocationRecord, LedgerStore } from "../../governance/audit/index.js";
import { ledgerBrowseTests } from "./ledger-browse-conformance.js";
import { ledgerObjectsTests } from "./ledger-objects-conformance.js";
import { type LedgerUnderTest, ledgerUnderTest } from "./ledger-under-test.js";
import { ledgerWriteTests } from "./ledger-write-conformance.js";

/** An ISO timestamp `seconds` after a fixed instant, so ordering tests do not depend on the real clock. */
function at(seconds: number): string {
  return new Date(Date.UTC(2025, 0, 1, 0, 0, 0) + seconds * 1000).toISOString();
}

let counter = 0;
function invocation(overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  counter += 1;
  return {
    invocationId: `inv-${counter}`,
    sessionId: "s1",
    sourceId: "pubmed",
    toolId: "search",
    status: "ok",
    startedAt: at(counter),
    finishedAt: at(counter + 1),
    durationMs: 12.5,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...overrides,
  };
}

function failure(code: string, overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  return invocation({
    status: "error",
    error: { code, message: `failed: ${code}`, retryable: false, attempts: 1 },
    ...overrides,
  });
}

function authorization(overrides: Partial<AuthorizationRecord> = {}): AuthorizationRecord {
  counter += 1;
  return {
    id: `auth-${counter}`,
    sessionId: "s1",
    sourceId: "arxiv",
    toolId: "download",
    action: "download",
    resource: "artifact:arxiv",
    decisionSource: "allow_once",
    createdAt: at(counter),
    epoch: 1,
    ...overrides,
  };
}

const FULL: InvocationRecord = {
  invocationId: "inv-full",
  sessionId: "s-full",
  threadId: "t-full",
  toolCallId: "call-full",
  runId: "run-full",
  sourceId: "uniprot",
  toolId: "lookup",
  mcpToolName: "uniprot_lookup",
  status: "error",
  startedAt: "2025-03-04T05:06:07.089Z",
  finishedAt: "2025-03-04T05:06:08.001Z",
  durationMs: 911.75,
  attempts: 3,
  cacheHit: false,
  queueWaitMs: 42.5,
  requestRef: `sha256:${"a".repeat(64)}`,
  rawRef: `sha256:${"b".repeat(64)}`,
  normalizedRef: `sha256:${"c".repeat(64)}`,
  authorizationId: "auth-9",
  license: "CC-BY-4.0",
  catalogRevision: "rev-1",
  toolDefinitionHash: "d".repeat(64),
  inputHash: "e".repeat(64),
  error: {
    code: "RATE_LIMITED",
    message: "429 after 3 attempts",
    retryable: true,
    attempts: 3,
    retryAfterMs: 1500,
  },
};

/**
 * Registers a vitest suite that checks a `LedgerStore` implementation: its batch append (one commit,
 * refusals per write, `again`), every text stored exactly (NUL, lone surrogates and U+FFFF included),
 * the objects it keeps with its rows when it has `objects` (or that it refuses them when it has not),
 * and what a console browses with: the filters, `after` paging, `count`, `activity` and authorizations
 * by id.
 * @param name suite title, e.g. `"SqliteLedger"`
 * @param factory returns a fresh, empty store for each test; the suite closes it afterwards
 * @example
 * describeLedgerConformance("MemoryLedger", () => new MemoryLedger());
 */
export function describeLedgerConformance(
  name: string,
  factory: () => Promise<LedgerStore> | LedgerStore,
): void {
  describe(`${name} (Ledger conformance)`, () => {
    const opened: LedgerUnderTest[] = [];
    const open = async () => {
      const ledger = ledgerUnderTest(await factory());
      opened.push(ledger);
      return ledger;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((ledger) => ledger.close()));
    });

    test("a record with every field round-trips exactly", async () => {
      const ledger = await open();
      await ledger.append(FULL);
      expect(await ledger.get(FULL.invocationId)).toEqual(FULL);
      expect(await ledger.findByCall("t-full", "call-full")).toEqual(FULL);
    });

    test("absent optional fields stay absent (no null or undefined keys)", async () => {
      const ledger = await open();
      const record = invocation({ cacheHit: true, attempts: 0 });
      await ledger.append(record);
      const stored = await ledger.get(record.invocationId);
      expect(stored).toEqual(record);
      expect(Object.keys(stored ?? {}).sort()).toEqual(Object.keys(record).sort());
    });

    test("empty optional strings are recorded as absent", async () => {
      const ledger = await open();
      const record = invocation({ threadId: "", toolCallId: "", license: "" });
      await ledger.append(record);
      const stored = await ledger.get(record.invocationId);
      expect(stored).not.toHaveProperty("threadId");
      expect(stored).not.toHaveProperty("license");
    });

    test("unknown ids and calls are undefined", async () => {
      const ledger = await open();
      await ledger.append(invocation({ threadId: "t1", toolCallId: "c1" }));
      expect(await ledger.get("nope")).toBeUndefined();
      expect(await ledger.findByCall("t1", "c2")).toBeUndefined();
      expect(await ledger.findByCall("t2", "c1")).toBeUndefined();
    });

    test("the same thread and tool call cannot be recorded twice", async () => {
      const ledger = await open();
      const first = invocation({ threadId: "t1", toolCallId: "c1" });
      await ledger.append(first);
      const again = invocation({ threadId: "t1", toolCallId: "c1", status: "error", error: FULL.error! });
      await expect(ledger.append(again)).rejects.toMatchObject({
        code: "DUPLICATE_ID",
        data: { existingInvocationId: first.invocationId },
      });
      expect(await ledger.findByCall("t1", "c1")).toEqual(first);
      expect(await ledger.get(again.invocationId)).toBeUndefined();
      expect(await ledger.query()).toHaveLength(1);
    });

    test("a tool call id may repeat across threads, and rows without a thread never collide", async () => {
      const ledger = await open();
      await ledger.append(invocation({ threadId: "t1", toolCallId: "c1" }));
      await ledger.append(invocation({ threadId: "t2", toolCallId: "c1" }));
      await ledger.append(invocation({ toolCallId: "c1" }));
      await ledger.append(invocation({ toolCallId: "c1" }));
      await ledger.append(invocation({ threadId: "t1" }));
      expect(await ledger.query()).toHaveLength(5);
    });

    test("an invocation id cannot be recorded twice", async () => {
      const ledger = await open();
      const record = invocation();
      await ledger.append(record);
      await expect(ledger.append({ ...record, sessionId: "other" })).rejects.toMatchObject({
        code: "DUPLICATE_ID",
      });
      expect((await ledger.get(record.invocationId))?.sessionId).toBe("s1");
    });

    test.each<[string, Record<string, unknown>, string]>([
      ["a missing invocationId", { invocationId: undefined }, "invocationId"],
      ["an empty sessionId", { sessionId: "" }, "sessionId"],
      ["an unknown status", { status: "maybe" }, "status"],
      ["a non-ISO startedAt", { startedAt: "yesterday" }, "startedAt"],
      ["a negative durationMs", { durationMs: -1 }, "durationMs"],
      ["a fractional attempts", { attempts: 1.5 }, "attempts"],
      ["a non-boolean cacheHit", { cacheHit: "no" }, "cacheHit"],
      ["an error status without error", { status: "error" }, "error"],
      [
        "an ok status with an error",
        { error: { code: "X", message: "", retryable: false, attempts: 0 } },
        "error",
      ],
      [
        "an error without a code",
        { status: "error", error: { message: "m", retryable: false, attempts: 1 } },
        "error.code",
      ],
      ["a non-string optional field", { runId: 7 }, "runId"],
    ])("append rejects %s with INVALID_INPUT and records nothing", async (_label, patch, path) => {
      const ledger = await open();
      const record = { ...invocation(), ...patch } as InvocationRecord;
      const error = await ledger.append(record).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "INVALID_INPUT" });
      expect((error as { data: { issues: { path: string }[] } }).data.issues.map((i) => i.path)).toContain(
        path,
      );
      expect(await ledger.query()).toEqual([]);
    });

    test.each<[string, Record<string, string>, string[]]>([
      ["sessionId", { sessionId: "s2" }, ["b", "d"]],
      ["threadId", { threadId: "t1" }, ["a", "b"]],
      ["runId", { runId: "r1" }, ["c"]],
      ["sourceId", { sourceId: "arxiv" }, ["b", "c"]],
      ["toolId", { toolId: "lookup" }, ["d"]],
      ["status", { status: "error" }, ["c", "d"]],
      ["sessionId and sourceId", { sessionId: "s2", sourceId: "arxiv" }, ["b"]],
      ["an empty filter (absent)", { sessionId: "" }, ["a", "b", "c", "d"]],
    ])("query filters by %s", async (_label, filter, expected) => {
      const ledger = await open();
      await ledger.append(invocation({ invocationId: "a", threadId: "t1" }));
      await ledger.append(
        invocation({ invocationId: "b", threadId: "t1", sessionId: "s2", sourceId: "arxiv" }),
      );
      await ledger.append(failure("TIMEOUT", { invocationId: "c", sourceId: "arxiv", runId: "r1" }));
      await ledger.append(failure("TIMEOUT", { invocationId: "d", sessionId: "s2", toolId: "lookup" }));
      const rows = await ledger.query(filter);
      expect(rows.map((r) => r.invocationId)).toEqual(expected);
    });

    test("query orders by startedAt (ties in append order), both ways, and limits after ordering", async () => {
      const ledger = await open();
      await ledger.append(invocation({ invocationId: "late", startedAt: at(30) }));
      await ledger.append(invocation({ invocationId: "early", startedAt: at(10) }));
      await ledger.append(invocation({ invocationId: "tie-1", startedAt: "2025-01-01T01:00:20+01:00" }));
      await ledger.append(invocation({ invocationId: "tie-2", startedAt: at(20) }));
      const ids = (rows: InvocationRecord[]) => rows.map((r) => r.invocationId);
      expect(ids(await ledger.query())).toEqual(["early", "tie-1", "tie-2", "late"]);
      expect(ids(await ledger.query({ order: "desc" }))).toEqual(["late", "tie-2", "tie-1", "early"]);
      expect(ids(await ledger.query({ order: "desc", limit: 2 }))).toEqual(["late", "tie-2"]);
      expect(await ledger.query({ limit: 0 })).toEqual([]);
    });

    test.each<[string, object]>([
      ["a negative limit", { limit: -1 }],
      ["a fractional limit", { limit: 1.5 }],
      ["an unknown order", { order: "sideways" }],
    ])("query rejects %s with INVALID_INPUT", async (_label, query) => {
      const ledger = await open();
      await expect(ledger.query(query)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("summary counts outcomes, cache hits, queue wait, error codes and sources", async () => {
      const ledger = await open();
      expect(await ledger.summary()).toEqual({
        calls: 0,
        ok: 0,
        errors: 0,
        cacheHits: 0,
        totalQueueWaitMs: 0,
        byErrorCode: {},
        bySource: {},
      });
      await ledger.append(invocation({ queueWaitMs: 100.5 }));
      await ledger.append(invocation({ cacheHit: true, attempts: 0, sourceId: "arxiv" }));
      await ledger.append(failure("TIMEOUT", { queueWaitMs: 20 }));
      await ledger.append(failure("TIMEOUT", { sessionId: "s2" }));
      await ledger.append(failure("PERMISSION_DENIED", { sessionId: "s2", sourceId: "arxiv", attempts: 0 }));
      expect(await ledger.summary()).toEqual({
        calls: 5,
        ok: 2,
        errors: 3,
        cacheHits: 1,
        totalQueueWaitMs: 120.5,
        byErrorCode: { TIMEOUT: 2, PERMISSION_DENIED: 1 },
        bySource: { pubmed: 3, arxiv: 2 },
      });
      expect(await ledger.summary({ sessionId: "s2" })).toEqual({
        calls: 2,
        ok: 0,
        errors: 2,
        cacheHits: 0,
        totalQueueWaitMs: 0,
        byErrorCode: { TIMEOUT: 1, PERMISSION_DENIED: 1 },
        bySource: { pubmed: 1, arxiv: 1 },
      });
    });

    test("200 concurrent appends lose no row", async () => {
      const ledger = await open();
      const records = Array.from({ length: 200 }, (_, i) =>
        invocation({ invocationId: `c-${i}`, threadId: "t-load", toolCallId: `call-${i}` }),
      );
      await Promise.all(records.map((record) => ledger.append(record)));
      const rows = await ledger.query({ threadId: "t-load" });
      expect(new Set(rows.map((r) => r.invocationId))).toEqual(new Set(records.map((r) => r.invocationId)));
      expect((await ledger.summary()).calls).toBe(200);
    });

    test("returned records are copies: changing one does not change the ledger", async () => {
      const ledger = await open();
      await ledger.append(FULL);
      const copy = await ledger.get(FULL.invocationId);
      copy!.sessionId = "tampered";
      copy!.error!.code = "TAMPERED";
      const [listed] = await ledger.query();
      listed!.toolId = "tampered";
      expect(await ledger.get(FULL.invocationId)).toEqual(FULL);
    });

    test("authorizations round-trip and list by session in createdAt order", async () => {
      const ledger = await open();
      const full = authorization({
        id: "a-full",
        threadId: "t1",
        toolCallId: "c1",
        createdAt: at(50),
        epoch: 7,
      });
      const early = authorization({ id: "a-early", createdAt: at(5) });
      const other = authorization({
        id: "a-other",
        sessionId: "s2",
        decisionSource: "grant",
        createdAt: at(20),
      });
      for (const record of [full, early, other]) await ledger.appendAuthorization(record);
      expect(await ledger.listAuthorizations({ sessionId: "s1" })).toEqual([early, full]);
      expect((await ledger.listAuthorizations()).map((a) => a.id)).toEqual(["a-early", "a-other", "a-full"]);
      const [listedEarly] = await ledger.listAuthorizations({ sessionId: "s1" });
      expect(Object.keys(listedEarly ?? {}).sort()).toEqual(Object.keys(early).sort());
    });

    test("an authorization id cannot be recorded twice", async () => {
      const ledger = await open();
      const record = authorization();
      await ledger.appendAuthorization(record);
      await expect(ledger.appendAuthorization({ ...record, epoch: 2 })).rejects.toMatchObject({
        code: "DUPLICATE_ID",
      });
      expect(await ledger.listAuthorizations()).toEqual([record]);
    });

    test.each<[string, Record<string, unknown>]>([
      ["an empty resource", { resource: "" }],
      ["a negative epoch", { epoch: -1 }],
      ["a non-ISO createdAt", { createdAt: "now" }],
    ])("appendAuthorization rejects %s with INVALID_INPUT", async (_label, patch) => {
      const ledger = await open();
      await expect(
        ledger.appendAuthorization({ ...authorization(), ...patch } as AuthorizationRecord),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await ledger.listAuthorizations()).toEqual([]);
    });

    test("close is idempotent and later calls fail with UPSTREAM_UNAVAILABLE", async () => {
      const ledger = await open();
      await ledger.close();
      await ledger.close();
      await expect(ledger.append(invocation())).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      await expect(ledger.query()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      await expect(ledger.get("x")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    });

    ledgerObjectsTests(open);
    ledgerWriteTests(open);
    ledgerBrowseTests(factory);
  });
}
