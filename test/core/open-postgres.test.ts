import { Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  isGovernanceError,
  migratePostgresSchema,
  openPostgres,
  type PostgresDatabase,
} from "../../src/core/index.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe("openPostgres", () => {
  test("refuses a URL that is not PostgreSQL's, naming the expected form and hiding the password", async () => {
    const error = await openPostgres("mysql://me:secret@db/x").catch((e: unknown) => e);
    expect(isGovernanceError(error) && error.code).toBe("INVALID_CONFIG");
    expect(String((error as Error).message)).toContain("postgres://");
    expect(String((error as Error).message)).not.toContain("secret");
  });

  test("an unreachable server is UPSTREAM_UNAVAILABLE (retryable), its password masked", async () => {
    const error = await openPostgres("postgres://u:hunter2@127.0.0.1:1/db", {
      connectionTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(isGovernanceError(error) && error.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(isGovernanceError(error) && error.retryable).toBe(true);
    expect(String((error as Error).message)).not.toContain("hunter2");
  });

  test("statements take parameters; a transaction commits on success and rolls back on a throw", async () => {
    const db = await openPostgres(await server.createDatabase());
    try {
      await db.query("CREATE TABLE t (v TEXT)");
      const evil = "x'); DROP TABLE t; --";
      await db.query("INSERT INTO t (v) VALUES ($1)", [evil]);
      await db.transaction(async (sql) => sql.query("INSERT INTO t (v) VALUES ($1)", ["kept"]));
      const failure = await db
        .transaction(async (sql) => {
          await sql.query("INSERT INTO t (v) VALUES ($1)", ["undone"]);
          throw new Error("boom");
        })
        .catch((e: unknown) => e);
      expect((failure as Error).message).toBe("boom");
      const rows = await db.query<{ v: string }>("SELECT v FROM t ORDER BY v");
      expect(rows.map((r) => r.v)).toEqual(["kept", evil]);
    } finally {
      await db.close();
      await db.close();
    }
  });

  test("an idle connection does not keep the process alive; one in use does", async () => {
    const url = await server.createDatabase();
    const port = Number(new URL(url).port);
    const db = await openPostgres(url, { maxConnections: 1 });
    try {
      // openPostgres ran `SELECT 1`: the pool holds one idle connection now, which keeps nothing alive.
      // Only this server's sockets are counted: other files in this worker may hold or close their own.
      const before = refedSockets(port);
      let inUse: number[] = [];
      await db.transaction(async (sql) => {
        inUse = refedSockets(port).filter((local) => !before.includes(local));
        await sql.query("SELECT pg_sleep(0.01)");
      });
      expect(inUse).toHaveLength(1);
      expect(refedSockets(port)).not.toContain(inUse[0]);
    } finally {
      await db.close();
    }
  });
});

/** Local ports of the sockets to `remotePort` that keep this process alive right now. */
function refedSockets(remotePort: number): number[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles
    .filter((h): h is Socket => h instanceof Socket && h.remotePort === remotePort)
    .map((s) => s.localPort ?? -1);
}

describe("migratePostgresSchema", () => {
  const migrations = ["CREATE TABLE a (id INT)", "ALTER TABLE a ADD COLUMN b TEXT; CREATE TABLE c (id INT)"];

  test("a statement whose session the server ends before it commits is sent again on a fresh connection, once", async () => {
    const url = await server.createDatabase();
    const db = await openPostgres(url, { maxConnections: 2 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await db.query("CREATE TABLE counter (n INTEGER NOT NULL); INSERT INTO counter VALUES (0)");
      // The statement waits on the lock; the administrator ends the session it waits in.
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE counter IN ACCESS EXCLUSIVE MODE");
      const bumped = db.query<{ n: number }>("UPDATE counter SET n = n + 1 RETURNING n");
      let ended = 0;
      for (let i = 0; i < 200 && ended === 0; i++) {
        const { rows } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
        );
        ended = rows.length;
        if (ended === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(ended).toBe(1);
      await admin.query("COMMIT");
      expect(await bumped).toEqual([{ n: 1 }]);
      expect(await db.query("SELECT n FROM counter")).toEqual([{ n: 1 }]);
    } finally {
      await admin.end();
      await db.close();
    }
  });

  test("after close(), statements are refused with UPSTREAM_UNAVAILABLE, not retryable", async () => {
    const db = await openPostgres(await server.createDatabase());
    await db.close();
    await expect(db.query("SELECT 1")).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: false,
    });
  });

  test("five processes' worth of pools migrating at once run each step once", async () => {
    const url = await server.createDatabase();
    const dbs: PostgresDatabase[] = await Promise.all(Array.from({ length: 5 }, () => openPostgres(url)));
    try {
      await Promise.all(dbs.map((db) => migratePostgresSchema(db, { store: "demo", migrations })));
      const [db] = dbs as [PostgresDatabase];
      const [version] = await db.query<{ version: number }>(
        "SELECT version FROM sciencegate_schema_versions WHERE store = 'demo'",
      );
      expect(version?.version).toBe(2);
      const columns = await db.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'a' ORDER BY column_name",
      );
      expect(columns.map((c) => c.column_name)).toEqual(["b", "id"]);
      // Running again is a no-op.
      await migratePostgresSchema(db, { store: "demo", migrations });
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });

  test("a newer schema than the code knows is refused with both versions and the fix", async () => {
    const db = await openPostgres(await server.createDatabase());
    try {
      await migratePostgresSchema(db, { store: "demo", migrations });
      const error = await migratePostgresSchema(db, {
        store: "demo",
        migrations: migrations.slice(0, 1),
      }).catch((e: unknown) => e);
      expect(isGovernanceError(error) && error.code).toBe("INVALID_CONFIG");
      expect((error as Error).message).toMatch(
        /version 2, newer than this Sciencegate supports \(1\); upgrade/,
      );
    } finally {
      await db.close();
    }
  });
});
