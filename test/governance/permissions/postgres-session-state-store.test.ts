import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { openPostgres, type PostgresDatabase } from "../../../src/core/index.js";
import {
  PostgresSessionStateStore,
  type PostgresSessionStateStoreOptions,
  type SessionStateStore,
} from "../../../src/governance/permissions/index.js";
import { describeSessionStateStoreConformance } from "../../../src/testing/conformance/index.js";
import { openTestPostgres, type TestPostgres } from "../../postgres/test-postgres.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** Each store on its own pool (as on its own replica); the pools close with the file. */
const databases: PostgresDatabase[] = [];
const urls = new WeakMap<SessionStateStore, string>();
afterAll(async () => {
  await Promise.all(databases.splice(0).map((db) => db.close()));
});

async function openStore(url: string, options: PostgresSessionStateStoreOptions = {}) {
  const db = await openPostgres(url, { maxConnections: 3, applicationName: "sciencegate-test" });
  databases.push(db);
  const store = await PostgresSessionStateStore.open(db, options);
  urls.set(store, url);
  return store;
}

// A catch-up every minute: the peers must converge through NOTIFY alone.
const notifyOnly = { pollIntervalMs: 60_000 };
describeSessionStateStoreConformance(
  "PostgresSessionStateStore",
  async () => openStore(await server.createDatabase(), notifyOnly),
  { peer: (first) => openStore(urls.get(first) as string, notifyOnly) },
);

describe("PostgresSessionStateStore across replicas", () => {
  test("a replica whose listener dropped reloads on reconnect and sees what it missed", async () => {
    const url = await server.createDatabase();
    const a = await openStore(url, notifyOnly);
    const b = await openStore(url, { ...notifyOnly, reconnectDelayMs: 300 });
    try {
      // Cut every listener connection (pool connections are idle); changes made now send no
      // notification that b can hear.
      const [admin] = databases.slice(-1) as [PostgresDatabase];
      const cut = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
      );
      expect(cut).toHaveLength(2);
      await a.setSourceSwitch("s1", "pubmed", false);
      await a.setApprovalMode("s1", "always_allow");
      await vi.waitFor(() => {
        expect(b.sourceSwitch("s1", "pubmed")).toBe(false);
        expect(b.approvalMode("s1")).toBe("always_allow");
      }, 5_000);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("without notifications at all, the catch-up interval bounds how stale a replica is", async () => {
    const url = await server.createDatabase();
    const a = await openStore(url, notifyOnly);
    const b = await openStore(url, { pollIntervalMs: 100 });
    try {
      // Written straight into the table, as a replica whose NOTIFY was lost would leave it.
      const [db] = databases.slice(-1) as [PostgresDatabase];
      await db.query(
        `WITH tick AS (UPDATE sciencegate_session_state_clock SET version = version + 1 RETURNING version)
         INSERT INTO sciencegate_approval_modes (session_id, mode, version) SELECT $1, $2, version FROM tick`,
        ["s9", "always_allow"],
      );
      const started = Date.now();
      await vi.waitFor(() => expect(b.approvalMode("s9")).toBe("always_allow"), 2_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(a.approvalMode("s9")).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("a malformed approval mode in the table is ignored, not served", async () => {
    const url = await server.createDatabase();
    const a = await openStore(url);
    await a.close();
    const [db] = databases.slice(-1) as [PostgresDatabase];
    await db.query(
      "INSERT INTO sciencegate_approval_modes (session_id, mode, version) VALUES ('s1', 'yolo', 1)",
    );
    const b = await openStore(url);
    try {
      expect(b.approvalMode("s1")).toBeUndefined();
      await expect(b.setApprovalMode("s1", "yolo" as "always_allow")).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    } finally {
      await b.close();
    }
  });

  test("a decision whose call never came is deleted after decisionRetentionMs; a recent one stays", async () => {
    const url = await server.createDatabase();
    const a = await openStore(url);
    const [db] = databases.slice(-1) as [PostgresDatabase];
    const recorded = (id: string) => ({
      fingerprint: `f-${id}`,
      decision: { decision: "allow_once" as const },
      result: { authorizationId: id, decisionSource: "user_once" as const },
    });
    await a.putDecision("t1:abandoned", recorded("a1"));
    await a.putDecision("t1:recent", recorded("a2"));
    await db.query(
      "UPDATE sciencegate_recorded_decisions SET recorded_at = now() - interval '8 days' WHERE call_key = 't1:abandoned'",
    );
    await a.close();
    // The next replica to open the store purges (the default retention is 7 days).
    const b = await openStore(url);
    try {
      expect(await b.peekDecision("t1:abandoned")).toBeUndefined();
      expect(await b.takeDecision("t1:recent")).toMatchObject({ fingerprint: "f-a2" });
    } finally {
      await b.close();
    }
    // With a short retention, a replica that stays open purges on its own timer.
    const c = await openStore(url, { decisionRetentionMs: 300 });
    try {
      await c.putDecision("t2:waits", recorded("a3"));
      expect(await c.peekDecision("t2:waits")).toBeDefined();
      await vi.waitFor(async () => expect(await c.peekDecision("t2:waits")).toBeUndefined(), {
        timeout: 5_000,
        interval: 100,
      });
    } finally {
      await c.close();
    }
  });

  test("the purge also drops a taken decision's mark after a day; a fresh mark stays", async () => {
    const url = await server.createDatabase();
    const a = await openStore(url);
    const [db] = databases.slice(-1) as [PostgresDatabase];
    const recorded = (id: string) => ({
      fingerprint: `f-${id}`,
      decision: { decision: "allow_once" as const },
      result: { authorizationId: id, decisionSource: "user_once" as const },
    });
    await a.putDecision("t1:old", recorded("a1"));
    await a.putDecision("t1:new", recorded("a2"));
    await a.takeDecision("t1:old");
    await a.takeDecision("t1:new");
    await db.query(
      "UPDATE sciencegate_recorded_decisions SET taken_at = now() - interval '2 days' WHERE call_key = 't1:old'",
    );
    await a.close();
    const b = await openStore(url);
    try {
      expect(await b.peekDecision("t1:old")).toBeUndefined();
      expect(await b.peekDecision("t1:new")).toMatchObject({ taken: true });
    } finally {
      await b.close();
    }
  });

  test.each([0, -1, 1.5, Number.NaN])("decisionRetentionMs %s is refused with INVALID_CONFIG", async (ms) => {
    const url = await server.createDatabase();
    await expect(openStore(url, { decisionRetentionMs: ms })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("decisionRetentionMs"),
    });
  });
});

describe("PostgresSessionStateStore schema migration", () => {
  test("a database of schema 2 gains principals on open: its modes are the single user's, a user's mode is its own", async () => {
    const url = await server.createDatabase();
    const admin = await openPostgres(url, { maxConnections: 1, applicationName: "sciencegate-test" });
    databases.push(admin);
    // The tables as schema 2 left them (before approval modes had a principal).
    await admin.query(`CREATE TABLE sciencegate_schema_versions (store TEXT PRIMARY KEY, version INTEGER NOT NULL);
      INSERT INTO sciencegate_schema_versions (store, version) VALUES ('session-state', 2);
      CREATE TABLE sciencegate_session_state_clock (id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id), version BIGINT NOT NULL);
      INSERT INTO sciencegate_session_state_clock (id, version) VALUES (TRUE, 1);
      CREATE TABLE sciencegate_source_switches (
        session_id TEXT NOT NULL, source_id TEXT NOT NULL, enabled BOOLEAN NOT NULL, version BIGINT NOT NULL,
        PRIMARY KEY (session_id, source_id));
      CREATE TABLE sciencegate_approval_modes (session_id TEXT PRIMARY KEY, mode TEXT NOT NULL, version BIGINT NOT NULL);
      CREATE TABLE sciencegate_recorded_decisions (
        call_key TEXT PRIMARY KEY, recorded JSONB NOT NULL, version BIGINT NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(), takes INTEGER NOT NULL DEFAULT 0, taken_at TIMESTAMPTZ);
      INSERT INTO sciencegate_approval_modes (session_id, mode, version) VALUES ('s1', 'always_allow', 1);`);
    const store = await openStore(url, notifyOnly);
    expect(store.approvalMode("s1")).toBe("always_allow");
    expect(store.approvalMode("s1", "alice")).toBeUndefined();
    await store.setApprovalMode("s1", "ask_for_dangerous", "alice");
    expect(store.approvalMode("s1", "alice")).toBe("ask_for_dangerous");
    expect(store.approvalMode("s1")).toBe("always_allow");
    const peer = await openStore(url, notifyOnly);
    expect(peer.approvalMode("s1", "alice")).toBe("ask_for_dangerous");
    expect(peer.approvalMode("s1")).toBe("always_allow");
  });
});
