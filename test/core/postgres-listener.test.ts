import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { openPostgres, type PostgresDatabase } from "../../src/core/index.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

let server: TestPostgres;
let db: PostgresDatabase;
beforeAll(async () => {
  server = await openTestPostgres();
  db = await openPostgres(await server.createDatabase(), { maxConnections: 2 });
}, 60_000);
afterAll(async () => {
  await db?.close();
  await server?.stop();
});

const listeners = () =>
  db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");

describe("PostgresDatabase.listen", () => {
  test("a channel that is not a plain identifier is INVALID_INPUT, and no connection stays open", async () => {
    await expect(db.listen("x; DROP TABLE t", { onNotification: () => {} })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(await listeners()).toEqual([]);
  });

  test("delivers notifications, reconnects after the server drops it (running onConnect again), and stops on close", async () => {
    const payloads: string[] = [];
    let connects = 0;
    const listener = await db.listen(
      "sg_test_channel",
      {
        onNotification: (p) => payloads.push(p),
        onConnect: () => {
          connects += 1;
        },
      },
      { reconnectDelayMs: 50 },
    );
    expect(connects).toBe(1);
    await db.query("SELECT pg_notify('sg_test_channel', $1)", ["first"]);
    await vi.waitFor(() => expect(payloads).toEqual(["first"]), 5_000);

    await db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    );
    await vi.waitFor(() => expect(connects).toBe(2), 5_000);
    expect(listener.connected).toBe(true);
    await db.query("SELECT pg_notify('sg_test_channel', $1)", ["second"]);
    await vi.waitFor(() => expect(payloads).toEqual(["first", "second"]), 5_000);

    await listener.close();
    await listener.close();
    expect(listener.connected).toBe(false);
    await vi.waitFor(async () => expect(await listeners()).toEqual([]), 5_000);
  });

  test("a listening connection does not keep the process alive; notifications still arrive", async () => {
    const before = refedSockets();
    const payloads: string[] = [];
    const listener = await db.listen("sg_idle_channel", { onNotification: (p) => payloads.push(p) });
    try {
      expect(listener.connected).toBe(true);
      expect(refedSockets()).toBe(before);
      await db.query("SELECT pg_notify('sg_idle_channel', $1)", ["heard"]);
      await vi.waitFor(() => expect(payloads).toEqual(["heard"]), 5_000);
    } finally {
      await listener.close();
    }
  });
});

/** Sockets that keep this process alive right now. */
function refedSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;
}
