import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openPostgres, type PostgresDatabase } from "../../../src/core/open-postgres.js";
import { contentObject, jsonObject } from "../../../src/governance/audit/content-object.js";
import { FileContentStore } from "../../../src/governance/audit/content-store.js";
import { withLedgerObjects } from "../../../src/governance/audit/ledger-content-store.js";
import { LedgerWriter, type LedgerWriterOptions } from "../../../src/governance/audit/ledger-writer.js";
import { PostgresLedger, type PostgresLedgerOptions } from "../../../src/governance/audit/postgres-ledger.js";
import { checkStoreIntegrity } from "../../../src/governance/audit/store-integrity.js";
import { describeLedgerConformance } from "../../../src/testing/conformance/ledger-conformance.js";
import { ledgerUnderTest } from "../../../src/testing/conformance/ledger-under-test.js";
import { closingDatabase, useTestSchemas } from "../../postgres/fresh-schema.js";
import { ledgerRow as row } from "./ledger-row.js";

const schemas = useTestSchemas();

/** A ledger in a schema of its own; closing the ledger also closes its pool. */
async function freshLedger(options: PostgresLedgerOptions = {}): Promise<PostgresLedger> {
  const db = await openPostgres(await schemas.next(), { maxConnections: 4 });
  return closingDatabase(await PostgresLedger.open(db, options), db);
}

/** What schema 4 added (the principal columns): dropped to make a ledger of an older schema. */
const DROP_PRINCIPAL = `DROP INDEX sciencegate_invocations_principal; DROP INDEX sciencegate_authorizations_principal;
  ALTER TABLE sciencegate_invocations DROP COLUMN principal;
  ALTER TABLE sciencegate_authorizations DROP COLUMN principal;`;

describeLedgerConformance("PostgresLedger", () => freshLedger());
describeLedgerConformance("PostgresLedger (no objects)", () => freshLedger({ maxInlineBytes: 0 }));

describe("PostgresLedger across replicas", () => {
  let url: string;
  const dbs: PostgresDatabase[] = [];
  const replica = async (writer?: LedgerWriterOptions) => {
    const db = await openPostgres(url, { maxConnections: 4 });
    dbs.push(db);
    return ledgerUnderTest(await PostgresLedger.open(db), writer);
  };
  beforeAll(async () => {
    url = await schemas.next();
  });
  afterAll(() => Promise.all(dbs.map((db) => db.close())));

  test("two replicas opening one database at once migrate it once and share rows and duplicates", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    await a.append(row("r-1", { threadId: "t1", toolCallId: "c1" }));
    expect(await b.findByCall("t1", "c1")).toMatchObject({ invocationId: "r-1" });
    await expect(b.append(row("r-2", { threadId: "t1", toolCallId: "c1" }))).rejects.toMatchObject({
      code: "DUPLICATE_ID",
      data: { existingInvocationId: "r-1" },
    });
    const versions = await dbs[0]!.query(
      "SELECT version FROM sciencegate_schema_versions WHERE store = 'ledger'",
    );
    expect(versions).toEqual([{ version: 4 }]);
  });

  test("400 concurrent appends through two replicas, 50 of them racing for the same calls, lose no row", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const results = await Promise.allSettled(
      Array.from({ length: 400 }, (_, i) =>
        (i % 2 === 0 ? a : b).append(row(`load-${i}`, { threadId: "t-load", toolCallId: `c-${i % 350}` })),
      ),
    );
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(50);
    for (const r of results)
      if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "DUPLICATE_ID" });
    expect(await a.query({ threadId: "t-load" })).toHaveLength(350);
    expect((await b.query({ threadId: "t-load" })).length).toBe(350);
  });

  test("a NUL character, which PostgreSQL refuses in text and jsonb, is stored in its batch and read back exactly", async () => {
    const ledger = await replica();
    const nul = row("nul-2", {
      license: "bad\u0000text",
      status: "error",
      error: {
        code: "TOOL_FAILED",
        message: "wrote the file, then\u0000failed",
        retryable: false,
        attempts: 1,
      },
    });
    const settled = await Promise.allSettled([
      ledger.append(row("nul-1")),
      ledger.append(nul),
      ledger.append(row("nul-3")),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(await ledger.get("nul-2")).toEqual(nul);
    // An operator's own SQL sees the escape, never a changed row.
    const [stored] = await dbs
      .at(-1)!
      .query<{ license: string }>(
        "SELECT license FROM sciencegate_invocations WHERE invocation_id = 'nul-2'",
      );
    expect(stored?.license).toBe("bad\uFFFF\uE000text");
  });

  test("an append whose connection is killed mid-statement is tried again on a fresh one and stored once", async () => {
    const ledger = await replica({ retryWithinMs: 10_000 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Hold the table so the ledger's insert waits on the lock, then end the connection it waits on.
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE sciencegate_invocations IN ACCESS EXCLUSIVE MODE");
      const appended = ledger.append(row("killed-1", { threadId: "t-kill", toolCallId: "c-1" }));
      let killed = 0;
      for (let i = 0; i < 200 && killed === 0; i++) {
        const { rows } = await admin.query(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
        );
        killed = rows.length;
        if (killed === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(killed).toBe(1);
      await admin.query("COMMIT");
      await appended;
      expect(await ledger.query({ threadId: "t-kill" })).toEqual([
        row("killed-1", { threadId: "t-kill", toolCallId: "c-1" }),
      ]);
    } finally {
      await admin.end();
    }
  });

  test("rows and authorizations appended in one turn share the commit; a duplicate authorization fails alone", async () => {
    const ledger = await replica();
    const auth = (id: string) => ({
      id,
      sessionId: "s-mixed",
      sourceId: "arxiv",
      toolId: "download",
      action: "download",
      resource: "artifact:arxiv",
      decisionSource: "user_once",
      createdAt: "2025-01-01T00:00:00.000Z",
      epoch: 1,
    });
    const settled = await Promise.allSettled([
      ledger.appendAuthorization(auth("mixed-a1")),
      ledger.append(row("mixed-1", { sessionId: "s-mixed", authorizationId: "mixed-a1" })),
      ledger.appendAuthorization(auth("mixed-a1")),
      ledger.appendAuthorization(auth("mixed-a2")),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(settled[2]).toMatchObject({ reason: { code: "DUPLICATE_ID" } });
    expect((await ledger.listAuthorizations({ sessionId: "s-mixed" })).map((a) => a.id)).toEqual([
      "mixed-a1",
      "mixed-a2",
    ]);
    expect(await ledger.query({ sessionId: "s-mixed" })).toHaveLength(1);
  });

  test("120 appends of 64 KiB objects started together (past the 8 MiB batch bound) all land with their objects", async () => {
    const ledger = await replica();
    const calls = Array.from({ length: 120 }, (_, i) => {
      const object = contentObject(new Uint8Array(64 * 1024).fill(i));
      return { record: row(`big-${i}`, { sessionId: "s-big", rawRef: object.ref }), object };
    });
    await Promise.all(calls.map((c) => ledger.append(c.record, [c.object])));
    expect(await ledger.query({ sessionId: "s-big" })).toHaveLength(120);
    expect((await ledger.objects?.get(calls[119]!.object.sha256))?.[0]).toBe(119);
  });

  test("a ledger of schema 1 gains the browsing indexes on open and keeps its rows", async () => {
    const older = await schemas.next();
    const db = await openPostgres(older, { maxConnections: 2 });
    dbs.push(db);
    const first = ledgerUnderTest(await PostgresLedger.open(db));
    for (let i = 0; i < 5; i++)
      await first.append(row(`v1-${i}`, { startedAt: `2025-01-01T00:00:0${i}.000Z` }));
    await first.close();
    // Schema 1 is schema 2 without the browsing indexes (3 only escapes text, 4 adds the principal).
    await db.query(`${DROP_PRINCIPAL} DROP INDEX sciencegate_invocations_started; DROP INDEX sciencegate_invocations_source;
      DROP INDEX sciencegate_invocations_tool_only; DROP INDEX sciencegate_authorizations_created;
      UPDATE sciencegate_schema_versions SET version = 1 WHERE store = 'ledger'`);
    const upgraded = ledgerUnderTest(await PostgresLedger.open(db));
    expect(
      (await upgraded.query({ order: "desc", limit: 2, after: "v1-3" })).map((r) => r.invocationId),
    ).toEqual(["v1-2", "v1-1"]);
    const indexes = await db.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname",
    );
    expect(indexes.map((i) => i.indexname)).toEqual(
      expect.arrayContaining([
        "sciencegate_authorizations_created",
        "sciencegate_invocations_source",
        "sciencegate_invocations_started",
        "sciencegate_invocations_tool_only",
      ]),
    );
    expect(await db.query("SELECT version FROM sciencegate_schema_versions WHERE store = 'ledger'")).toEqual([
      { version: 4 },
    ]);
  });

  test("a ledger of schema 2 holding a U+FFFF gets it escaped on open, and reads it back as it was written", async () => {
    const older = await schemas.next();
    const db = await openPostgres(older, { maxConnections: 2 });
    dbs.push(db);
    const first = ledgerUnderTest(await PostgresLedger.open(db));
    await first.append(
      row("ffff-1", { status: "error", error: { code: "X", message: "m", retryable: false, attempts: 1 } }),
    );
    await first.close();
    // What schema 2 stored for text holding U+FFFF: the text itself. Unescaped, U+FFFF U+E000 would
    // read back as a NUL.
    const written = "run\uFFFF\uE000x";
    await db.query(
      `UPDATE sciencegate_invocations SET run_id = $1, error = jsonb_build_object('code', 'X', 'message', $1::text,
         'retryable', false, 'attempts', 1) WHERE invocation_id = 'ffff-1'`,
      [written],
    );
    await db.query(
      `${DROP_PRINCIPAL} UPDATE sciencegate_schema_versions SET version = 2 WHERE store = 'ledger'`,
    );
    const upgraded = ledgerUnderTest(await PostgresLedger.open(db));
    expect(await upgraded.get("ffff-1")).toMatchObject({ runId: written, error: { message: written } });
    expect(await upgraded.query({ runId: written })).toHaveLength(1);
  });

  test("a ledger of schema 3 gains the principal columns on open: old rows have none, new ones carry it", async () => {
    const older = await schemas.next();
    const db = await openPostgres(older, { maxConnections: 2 });
    dbs.push(db);
    const first = ledgerUnderTest(await PostgresLedger.open(db));
    await first.append(row("before-1"));
    await first.close();
    await db.query(
      `${DROP_PRINCIPAL} UPDATE sciencegate_schema_versions SET version = 3 WHERE store = 'ledger'`,
    );
    const upgraded = ledgerUnderTest(await PostgresLedger.open(db));
    await upgraded.append(row("after-1", { principal: "alice" }));
    expect((await upgraded.get("before-1"))?.principal).toBeUndefined();
    expect((await upgraded.query({ principal: "alice" })).map((r) => r.invocationId)).toEqual(["after-1"]);
    expect(await db.query("SELECT version FROM sciencegate_schema_versions WHERE store = 'ledger'")).toEqual([
      { version: 4 },
    ]);
  });

  test("a database with a newer ledger schema is refused with INVALID_CONFIG", async () => {
    const newer = await schemas.next();
    const db = await openPostgres(newer, { maxConnections: 2 });
    dbs.push(db);
    await PostgresLedger.open(db);
    await db.query("UPDATE sciencegate_schema_versions SET version = 99 WHERE store = 'ledger'");
    await expect(PostgresLedger.open(db)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      data: { version: 99, supported: 4 },
    });
  });

  test("a closed database rejects appends at once with UPSTREAM_UNAVAILABLE (nothing to wait for)", async () => {
    const db = await openPostgres(url, { maxConnections: 2 });
    const ledger = new LedgerWriter(await PostgresLedger.open(db));
    await db.close();
    await expect(ledger.append(row("after-close"))).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: false,
    });
    await ledger.close();
  });
});

describe("PostgresLedger's batch statement", () => {
  test("runs prepared on its connection, one statement per count of objects; past 16 objects unnamed", async () => {
    const db = await openPostgres(await schemas.next(), { maxConnections: 1 });
    const ledger = await PostgresLedger.open(db);
    try {
      const objects = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => contentObject(Buffer.from(`${tag} object ${i}`)));
      const write = (id: string, n: number) => ({
        kind: "invocation" as const,
        record: row(id),
        objects: objects(n, id),
      });
      for (const [id, n] of [
        ["p-1", 2],
        ["p-2", 2],
        ["p-3", 3],
        ["p-4", 17],
      ] as const) {
        expect(await ledger.appendBatch([write(id, n)])).toEqual([{ stored: true }]);
      }
      // The pool's one connection: what it prepared is visible to its next statement.
      const prepared = await db.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE name LIKE 'sciencegate_ledger_batch_%' ORDER BY name",
      );
      expect(prepared.map((p) => p.name)).toEqual([
        "sciencegate_ledger_batch_2",
        "sciencegate_ledger_batch_3",
      ]);
      expect((await ledger.query({})).map((r) => r.invocationId).sort()).toEqual([
        "p-1",
        "p-2",
        "p-3",
        "p-4",
      ]);
    } finally {
      await ledger.close();
      await db.close();
    }
  });
});

describe("PostgresLedger objects through withLedgerObjects and checkStoreIntegrity", () => {
  test("inline objects read back through the layered store; a corrupted one is reported", async () => {
    const url = await schemas.next();
    const db = await openPostgres(url, { maxConnections: 2 });
    const ledger = ledgerUnderTest(await PostgresLedger.open(db));
    const folder = mkdtempSync(join(tmpdir(), "sciencegate-pg-cas-"));
    try {
      const files = new FileContentStore(join(folder, "cas"));
      const store = withLedgerObjects(files, ledger);
      const small = jsonObject({ records: [{ title: "inline in PostgreSQL" }] });
      const large = await files.putJson({ text: "x".repeat(100_000) });
      await ledger.append(row("obj-1", { normalizedRef: small.ref, rawRef: large.ref }), [small]);
      expect(await store.getJson(small.ref)).toEqual({ records: [{ title: "inline in PostgreSQL" }] });
      expect(await files.has(small.ref)).toBe(false);
      expect(await checkStoreIntegrity({ ledger, store })).toMatchObject({
        rows: 1,
        refs: 2,
        inlineRefs: 1,
        ok: true,
      });

      // Change the stored bytes behind the ledger's back, as a faulty disk or an operator could.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("UPDATE sciencegate_ledger_objects SET bytes = $1 WHERE sha256 = $2", [
        Buffer.from("{}".padEnd(small.size, " ")),
        small.sha256,
      ]);
      await client.end();
      expect(await checkStoreIntegrity({ ledger, store })).toMatchObject({ corrupt: [small.ref], ok: false });
    } finally {
      await ledger.close();
      await db.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
