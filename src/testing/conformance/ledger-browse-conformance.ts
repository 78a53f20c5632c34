/**
 * The part of the ledger contract a console browses with: the filters of `query` beyond equality
 * (`errorCode`, `cacheHit`, a start range, `text`), keyset paging with `after`, `count`, `activity`
 * buckets, and authorizations by id, newest first and limited.
 */
import { afterAll, afterEach, describe, expect, test } from "vitest";
import type {
  AuthorizationListOptions,
  AuthorizationRecord,
  InvocationRecord,
  LedgerQuery,
  LedgerReader,
  LedgerStore,
} from "../../governance/audit/index.js";
import { type LedgerUnderTest, ledgerUnderTest } from "./ledger-under-test.js";

const T0 = Date.UTC(2025, 0, 1);
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

function row(id: string, startedMs: number, overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  return {
    invocationId: id,
    sessionId: "s-browse",
    sourceId: "pubmed",
    toolId: "search",
    status: "ok",
    startedAt: iso(startedMs),
    finishedAt: iso(startedMs + 5),
    durationMs: 5,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...overrides,
  };
}

function failed(
  id: string,
  startedMs: number,
  code: string,
  message: string,
  overrides = {},
): InvocationRecord {
  return row(id, startedMs, {
    status: "error",
    error: { code, message, retryable: false, attempts: 1 },
    ...overrides,
  });
}

/** Seven rows over three hours, with ties of `startedAt` and text worth searching for. */
const ROWS: readonly InvocationRecord[] = [
  row("a", T0, { threadId: "t1", toolCallId: "c1", runId: "run-secret" }),
  failed("b", T0 + HOUR / 2, "TIMEOUT", "Deadline passed at 50% of the budget", {
    sessionId: "Session-Upper",
    sourceId: "arxiv",
    toolId: "download",
  }),
  row("c", T0 + HOUR / 2, { cacheHit: true, attempts: 0, license: "CC-BY-4.0" }),
  failed("d", T0 + HOUR, "RATE_LIMITED", "429 Too Many Requests", { sourceId: "uniprot", toolId: "lookup" }),
  row("e", T0 + 2 * HOUR + 1, { sourceId: "arxiv", threadId: "thread_x", mcpToolName: "arxiv_search" }),
  failed("f", T0 + 2 * HOUR + 1, "TIMEOUT", "timed out (ÉLAN)"),
  row("g", T0 + 2 * HOUR + 10 * 60_000),
];
const ALL = ROWS.map((r) => r.invocationId);

const ids = (rows: readonly InvocationRecord[]) => rows.map((r) => r.invocationId);

async function fill(ledger: LedgerUnderTest): Promise<LedgerUnderTest> {
  for (const record of ROWS) await ledger.append(record);
  return ledger;
}

/** Every page of a query, `limit` rows at a time, each page after the last row of the one before. */
async function pageThrough(ledger: LedgerReader, query: LedgerQuery, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = ids(await ledger.query({ ...query, limit, after }));
    if (page.length === 0) return pages;
    pages.push(page);
    after = page.at(-1);
    if (pages.length > 100) throw new Error("Paging does not end.");
  }
}

function authorization(id: string, createdMs: number, sessionId = "s1"): AuthorizationRecord {
  return {
    id,
    sessionId,
    sourceId: "arxiv",
    toolId: "download",
    action: "download",
    resource: "artifact:arxiv",
    decisionSource: "user_once",
    createdAt: iso(createdMs),
    epoch: 1,
  };
}

/**
 * Registers the browsing tests inside a ledger conformance suite. Tests that only read share one
 * ledger holding `ROWS`; the others get a fresh one each.
 * @param factory returns a fresh, empty ledger
 */
export function ledgerBrowseTests(factory: () => Promise<LedgerStore> | LedgerStore): void {
  describe("browsing", () => {
    const opened: LedgerUnderTest[] = [];
    const open = async () => {
      const ledger = ledgerUnderTest(await factory());
      opened.push(ledger);
      return ledger;
    };
    let shared: LedgerUnderTest | undefined;
    const filled = async () => {
      shared ??= await fill(ledgerUnderTest(await factory()));
      return shared;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((ledger) => ledger.close()));
    });
    afterAll(() => shared?.close());

    test.each<[string, LedgerQuery, string[]]>([
      ["errorCode", { errorCode: "TIMEOUT" }, ["b", "f"]],
      ["errorCode and sourceId", { errorCode: "TIMEOUT", sourceId: "arxiv" }, ["b"]],
      ["errorCode of ok rows", { errorCode: "TIMEOUT", status: "ok" }, []],
      ["cacheHit true", { cacheHit: true }, ["c"]],
      ["cacheHit false", { cacheHit: false }, ["a", "b", "d", "e", "f", "g"]],
      ["startedFrom (inclusive)", { startedFrom: iso(T0 + HOUR) }, ["d", "e", "f", "g"]],
      ["startedBefore (exclusive)", { startedBefore: iso(T0 + HOUR / 2) }, ["a"]],
      [
        "a range in another zone",
        { startedFrom: "2025-01-01T01:30:00+01:00", startedBefore: iso(T0 + HOUR) },
        ["b", "c"],
      ],
      ["text in either case", { text: "session-UPPER" }, ["b"]],
      ["text in an error code", { text: "timeout" }, ["b", "f"]],
      ["text in an error message", { text: "too many" }, ["d"]],
      ["text in ids", { text: "c1" }, ["a"]],
      ["text in a tool id", { text: "LOOK" }, ["d"]],
      ["text with % (literal)", { text: "50%" }, ["b"]],
      ["text of % alone (literal)", { text: "%" }, ["b"]],
      ["text with _ (literal)", { text: "_" }, ["d", "e"]],
      ["text with a backslash (literal)", { text: "\\" }, []],
      ["text outside the searched fields", { text: "run-secret" }, []],
      ["text with non-ASCII letters (exact)", { text: "ÉLAN" }, ["f"]],
      ["text with non-ASCII letters in another case", { text: "élan" }, []],
      ["text, source and status together", { text: "t", sourceId: "pubmed", status: "error" }, ["f"]],
      [
        "empty strings (absent)",
        { errorCode: "", text: "", startedFrom: "", startedBefore: "", after: "" },
        ALL,
      ],
    ])("query filters by %s", async (_label, query, expected) => {
      const ledger = await filled();
      expect(ids(await ledger.query(query))).toEqual(expected);
      expect(ids(await ledger.query({ ...query, order: "desc" }))).toEqual([...expected].reverse());
      expect(await ledger.count(query)).toBe(expected.length);
    });

    test("after pages through every row in both orders, ties included, without gaps or repeats", async () => {
      const ledger = await open();
      // 23 rows on 6 distinct instants, appended out of time order: ties keep append order.
      const appended: InvocationRecord[] = [];
      for (let i = 0; i < 23; i++) {
        const record = row(`p-${i}`, T0 + ((i * 7) % 6) * 1000, {
          sourceId: i % 3 === 0 ? "arxiv" : "pubmed",
        });
        appended.push(record);
        await ledger.append(record);
      }
      const ascending = ids(await ledger.query());
      expect(ascending).toHaveLength(23);
      for (const limit of [1, 4, 5, 23, 50]) {
        const up = await pageThrough(ledger, {}, limit);
        expect(up.flat()).toEqual(ascending);
        expect(up.every((page) => page.length <= limit)).toBe(true);
        const down = await pageThrough(ledger, { order: "desc" }, limit);
        expect(down.flat()).toEqual([...ascending].reverse());
      }
      const arxiv = ids(await ledger.query({ sourceId: "arxiv", order: "desc" }));
      expect(arxiv).toHaveLength(8);
      expect((await pageThrough(ledger, { sourceId: "arxiv", order: "desc" }, 3)).flat()).toEqual(arxiv);
    });

    test("after takes the rows after a row that does not match the filters", async () => {
      const ledger = await filled();
      expect(ids(await ledger.query({ sourceId: "arxiv", after: "c" }))).toEqual(["e"]);
      expect(ids(await ledger.query({ sourceId: "arxiv", after: "c", order: "desc" }))).toEqual(["b"]);
      expect(ids(await ledger.query({ after: "b", limit: 2 }))).toEqual(["c", "d"]);
      expect(ids(await ledger.query({ after: "c", order: "desc" }))).toEqual(["b", "a"]);
      expect(await ledger.query({ after: "g" })).toEqual([]);
    });

    test("an after that names no row is UNKNOWN_ID naming it", async () => {
      const ledger = await filled();
      await expect(ledger.query({ after: "nope", order: "desc" })).rejects.toMatchObject({
        code: "UNKNOWN_ID",
        data: { after: "nope" },
      });
    });

    test("count counts every matching row whatever the limit, order and after", async () => {
      const ledger = await open();
      expect(await ledger.count()).toBe(0);
      for (const record of ROWS) await ledger.append(record);
      expect(await ledger.count()).toBe(7);
      expect(await ledger.count({ limit: 1, order: "desc", after: "a" })).toBe(7);
      expect(await ledger.count({ sourceId: "pubmed" })).toBe(4);
      expect(await ledger.count({ status: "error", startedFrom: iso(T0 + HOUR) })).toBe(2);
    });

    test("activity counts rows per bucket, source and outcome, sorted by start, source, status", async () => {
      const ledger = await filled();
      const hour = (n: number) => iso(T0 + n * HOUR);
      expect(await ledger.activity({ bucketMs: HOUR })).toEqual([
        { start: hour(0), sourceId: "arxiv", status: "error", count: 1 },
        { start: hour(0), sourceId: "pubmed", status: "ok", count: 2 },
        { start: hour(1), sourceId: "uniprot", status: "error", count: 1 },
        { start: hour(2), sourceId: "arxiv", status: "ok", count: 1 },
        { start: hour(2), sourceId: "pubmed", status: "error", count: 1 },
        { start: hour(2), sourceId: "pubmed", status: "ok", count: 1 },
      ]);
      expect(
        await ledger.activity({ bucketMs: 3 * HOUR, sourceId: "pubmed", startedFrom: iso(T0 + 1) }),
      ).toEqual([
        { start: hour(0), sourceId: "pubmed", status: "error", count: 1 },
        { start: hour(0), sourceId: "pubmed", status: "ok", count: 2 },
      ]);
      expect(await ledger.activity({ bucketMs: HOUR, text: "timeout", limit: 0, after: "zz" })).toEqual([
        { start: hour(0), sourceId: "arxiv", status: "error", count: 1 },
        { start: hour(2), sourceId: "pubmed", status: "error", count: 1 },
      ]);
      expect(await ledger.activity({ bucketMs: HOUR, startedFrom: hour(5), startedBefore: hour(6) })).toEqual(
        [],
      );
    });

    test("activity buckets start at the floor of the time, also before 1970, and an empty ledger has none", async () => {
      const ledger = await open();
      expect(await ledger.activity({ bucketMs: HOUR })).toEqual([]);
      await ledger.append(row("old", Date.UTC(1969, 11, 31, 23, 30)));
      expect(await ledger.activity({ bucketMs: HOUR })).toEqual([
        { start: "1969-12-31T23:00:00.000Z", sourceId: "pubmed", status: "ok", count: 1 },
      ]);
    });

    test("activity refuses a range of more than 1,000 buckets; a missing bound is the first or last row", async () => {
      const ledger = await open();
      const thousand = { startedFrom: iso(T0), startedBefore: iso(T0 + 1000 * 1000), bucketMs: 1000 };
      expect(await ledger.activity(thousand)).toEqual([]);
      await expect(
        ledger.activity({ ...thousand, startedBefore: iso(T0 + 1000 * 1000 + 1) }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT", data: { buckets: 1001, maxBuckets: 1000 } });
      await ledger.append(row("first", T0));
      await ledger.append(row("last", T0 + 1000 * 1000));
      await expect(ledger.activity({ bucketMs: 1000 })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        data: { buckets: 1001 },
      });
      await expect(ledger.activity({ bucketMs: 1000, startedFrom: iso(T0 + 1000) })).resolves.toEqual([
        { start: iso(T0 + 1000 * 1000), sourceId: "pubmed", status: "ok", count: 1 },
      ]);
      expect(await ledger.activity({ bucketMs: 2000 })).toHaveLength(2);
    });

    test.each<[string, Record<string, unknown>, string]>([
      ["a non-ISO startedFrom", { startedFrom: "yesterday" }, "startedFrom"],
      ["a startedBefore without time or zone", { startedBefore: "2025-01-01" }, "startedBefore"],
      ["an impossible month", { startedFrom: "2025-13-01T00:00:00Z" }, "startedFrom"],
      ["a non-boolean cacheHit", { cacheHit: "yes" }, "cacheHit"],
      ["a text of 257 characters", { text: "x".repeat(257) }, "text"],
      ["a non-string errorCode", { errorCode: 7 }, "errorCode"],
    ])(
      "query, count and activity reject %s with INVALID_INPUT naming the field",
      async (_label, bad, path) => {
        const ledger = await filled();
        const calls = [
          () => ledger.query(bad as LedgerQuery),
          () => ledger.count(bad as LedgerQuery),
          () => ledger.activity({ ...(bad as LedgerQuery), bucketMs: HOUR }),
        ];
        for (const call of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toMatchObject({ code: "INVALID_INPUT" });
          expect(
            (error as { data: { issues: { path: string }[] } }).data.issues.map((i) => i.path),
          ).toContain(path);
        }
      },
    );

    test.each<[string, unknown]>([
      ["absent", undefined],
      ["below a second", 999],
      ["fractional", 1500.5],
      ["negative", -HOUR],
      ["past 366 days", 366 * 24 * HOUR + 1],
      ["a string", "3600000"],
    ])("activity rejects a bucketMs %s with INVALID_INPUT", async (_label, bucketMs) => {
      const ledger = await filled();
      const error = await ledger.activity({ bucketMs } as LedgerQuery & { bucketMs: number }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "INVALID_INPUT", data: { issues: [{ path: "bucketMs" }] } });
    });

    test("an invocation's authorization is found by its id; an unknown id is undefined", async () => {
      const ledger = await open();
      const allowed = { ...authorization("auth-allowed", T0), threadId: "t1", toolCallId: "c1", epoch: 4 };
      await ledger.appendAuthorization(authorization("auth-other", T0));
      await ledger.appendAuthorization(allowed);
      await ledger.append(row("allowed-call", T0 + 1, { authorizationId: "auth-allowed" }));
      const call = await ledger.get("allowed-call");
      const found = await ledger.getAuthorization(call?.authorizationId ?? "");
      expect(found).toEqual(allowed);
      found!.epoch = 99;
      expect(await ledger.getAuthorization("auth-allowed")).toEqual(allowed);
      expect(await ledger.getAuthorization("auth-missing")).toBeUndefined();
    });

    test("listAuthorizations orders both ways (ties in append order) and limits after ordering", async () => {
      const ledger = await open();
      const records = [
        authorization("z-late", T0 + 3000),
        authorization("tie-1", T0 + 1000),
        authorization("other", T0 + 2000, "s2"),
        authorization("tie-2", T0 + 1000),
        authorization("early", T0),
      ];
      for (const record of records) await ledger.appendAuthorization(record);
      const list = async (options: Parameters<LedgerReader["listAuthorizations"]>[0]) =>
        (await ledger.listAuthorizations(options)).map((a) => a.id);
      expect(await list(undefined)).toEqual(["early", "tie-1", "tie-2", "other", "z-late"]);
      expect(await list({ order: "desc" })).toEqual(["z-late", "other", "tie-2", "tie-1", "early"]);
      expect(await list({ order: "desc", limit: 2 })).toEqual(["z-late", "other"]);
      expect(await list({ limit: 2 })).toEqual(["early", "tie-1"]);
      expect(await list({ sessionId: "s1", order: "desc", limit: 3 })).toEqual(["z-late", "tie-2", "tie-1"]);
      expect(await list({ sessionId: "", limit: 0 })).toEqual([]);
      await expect(ledger.listAuthorizations({ limit: 1.5 })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
      await expect(
        ledger.listAuthorizations({ order: "newest" } as unknown as AuthorizationListOptions),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("a closed ledger refuses count, activity and getAuthorization with UPSTREAM_UNAVAILABLE", async () => {
      const ledger = await open();
      await ledger.close();
      await expect(ledger.count()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      await expect(ledger.activity({ bucketMs: HOUR })).rejects.toMatchObject({
        code: "UPSTREAM_UNAVAILABLE",
      });
      await expect(ledger.getAuthorization("x")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    });

    test("rows keep their principal exactly, and query, count, text and listAuthorizations filter by it", async () => {
      const ledger = await open();
      // A principal is third-party text (a token's subject): NUL, U+FFFF and LIKE wildcards included.
      const odd = "user\u0000%_\uffff@idp";
      await ledger.append(row("p-alice", T0, { principal: "alice" }));
      await ledger.append(row("p-bob", T0 + 1, { principal: "bob" }));
      await ledger.append(row("p-odd", T0 + 2, { principal: odd }));
      await ledger.append(row("p-none", T0 + 3));
      await ledger.appendAuthorization({ ...authorization("a-alice", T0), principal: "alice" });
      await ledger.appendAuthorization({ ...authorization("a-odd", T0 + 1), principal: odd });
      await ledger.appendAuthorization(authorization("a-none", T0 + 2));
      expect((await ledger.get("p-odd"))?.principal).toBe(odd);
      expect((await ledger.get("p-none"))?.principal).toBeUndefined();
      expect(ids(await ledger.query({ principal: "alice" }))).toEqual(["p-alice"]);
      expect(ids(await ledger.query({ principal: odd }))).toEqual(["p-odd"]);
      expect(ids(await ledger.query({ principal: "" }))).toEqual(["p-alice", "p-bob", "p-odd", "p-none"]);
      expect(await ledger.count({ principal: "bob" })).toBe(1);
      expect(ids(await ledger.query({ text: "BOB" }))).toEqual(["p-bob"]);
      const authorizations = async (options: AuthorizationListOptions) =>
        (await ledger.listAuthorizations(options)).map((a) => [a.id, a.principal]);
      expect(await authorizations({ principal: "alice" })).toEqual([["a-alice", "alice"]]);
      expect(await authorizations({ principal: odd, sessionId: "s1" })).toEqual([["a-odd", odd]]);
      expect(await authorizations({})).toEqual([
        ["a-alice", "alice"],
        ["a-odd", odd],
        ["a-none", undefined],
      ]);
    });
  });
}
