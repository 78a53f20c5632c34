import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openPostgres, type PostgresDatabase } from "../../../src/core/open-postgres.js";
import { PostgresGrantStore } from "../../../src/governance/permissions/postgres-grant-store.js";
import { describeGrantStoreConformance } from "../../../src/testing/conformance/grant-store-conformance.js";
import { closingDatabase, useTestSchemas } from "../../postgres/fresh-schema.js";

const schemas = useTestSchemas();

describeGrantStoreConformance("PostgresGrantStore", async () => {
  const db = await openPostgres(await schemas.next(), { maxConnections: 4 });
  return closingDatabase(await PostgresGrantStore.open(db), db);
});

describeGrantStoreConformance("PostgresGrantStore (epochs commit with the ledger)", async () => {
  const db = await openPostgres(await schemas.next(), { maxConnections: 4 });
  return closingDatabase(await PostgresGrantStore.open(db, { epochsCommitWithLedger: true }), db);
});

const grant = (id: string, toolDefinitionHash = "h1") => ({
  id,
  sessionId: "s1",
  action: "arxiv:download",
  resource: "artifact:arxiv",
  createdAt: "2025-01-01T00:00:00.000Z",
  toolDefinitionHash,
});

describe("PostgresGrantStore across replicas", () => {
  const dbs: PostgresDatabase[] = [];
  let url: string;
  const replica = async () => {
    const db = await openPostgres(url, { maxConnections: 4 });
    dbs.push(db);
    return PostgresGrantStore.open(db);
  };
  beforeAll(async () => {
    url = await schemas.next();
  });
  afterAll(() => Promise.all(dbs.map((db) => db.close())));

  test("two replicas ensuring one grant at once keep one, and both see it", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).ensure(grant(`g-${i}`))),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.grant.id)).size).toBe(1);
    expect(await b.list({ sessionId: "s1" })).toHaveLength(1);
    // A new tool definition on one replica replaces the grant for both.
    await a.ensure(grant("g-new", "h2"));
    expect((await b.list()).map((g) => g.id)).toEqual(["g-new"]);
  });

  test("epochs count up atomically across replicas", async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const epochs = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).nextEpoch("s-epoch")),
    );
    expect([...epochs].sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(await b.currentEpoch("s-epoch")).toBe(60);
  });
});

describe("PostgresGrantStore epochsCommitWithLedger", () => {
  /** Log flushes this connection's backend has waited for (one connection: always the same backend). */
  const walFlushes = async (db: PostgresDatabase) => {
    await db.query("SELECT pg_stat_force_next_flush()");
    const [row] = await db.query<{ n: string }>(
      "SELECT coalesce(sum(fsyncs), 0)::text AS n FROM pg_stat_get_backend_io(pg_backend_pid()) WHERE object = 'wal'",
    );
    return Number(row?.n);
  };

  test.each([
    [false, "one per commit"],
    [true, "none"],
  ])(
    "with the option %s, 50 epoch increments wait for %s of their own log flushes; the connection keeps synchronous_commit on",
    async (quick) => {
      const db = await openPostgres(await schemas.next(), { maxConnections: 1 });
      try {
        const store = await PostgresGrantStore.open(db, { epochsCommitWithLedger: quick });
        const before = await walFlushes(db);
        for (let i = 1; i <= 50; i++) expect(await store.nextEpoch("s1")).toBe(i);
        const flushes = (await walFlushes(db)) - before;
        // Another backend's flush can cover a commit (a shared server), so "one per commit" is at least one.
        if (quick) expect(flushes).toBe(0);
        else expect(flushes).toBeGreaterThan(0);
        // The setting was the statement's own transaction's: the pooled connection's next user is unaffected.
        expect(await db.query("SHOW synchronous_commit")).toEqual([{ synchronous_commit: "on" }]);
        expect(await store.currentEpoch("s1")).toBe(50);
      } finally {
        await db.close();
      }
    },
  );
});
