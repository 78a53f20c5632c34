/**
 * The behaviour every `GrantStore` must show. Another backend (Postgres for a multi-replica
 * deployment) runs this suite with its own factory to prove it can replace the SQLite store.
 */
import { describe, expect, test } from "vitest";
import type { Grant, GrantStore } from "../../governance/permissions/index.js";
import { closingAfterEach } from "./opened-stores.js";

let counter = 0;
function grant(overrides: Partial<Grant> = {}): Grant {
  counter += 1;
  return {
    id: `grant-${counter}`,
    sessionId: "s1",
    action: "pubmed:search",
    resource: "pubmed:search",
    createdAt: new Date(Date.UTC(2025, 0, 1) + counter * 1000).toISOString(),
    toolDefinitionHash: "hash-a",
    ...overrides,
  };
}

/**
 * Registers a vitest suite that checks a `GrantStore` implementation.
 * @param name suite title, e.g. `"SqliteGrantStore"`
 * @param factory returns a fresh, empty store for each test; the suite closes it afterwards
 * @example
 * describeGrantStoreConformance("MemoryGrantStore", () => new MemoryGrantStore());
 */
export function describeGrantStoreConformance(
  name: string,
  factory: () => Promise<GrantStore> | GrantStore,
): void {
  describe(`${name} (GrantStore conformance)`, () => {
    const open = closingAfterEach(factory);

    test("a created grant round-trips exactly and is found by its full key", async () => {
      const store = await open();
      const g = grant();
      expect(await store.ensure(g)).toEqual({ grant: g, created: true });
      expect(await store.find(g)).toEqual(g);
      expect(await store.list()).toEqual([g]);
    });

    test.each([
      ["sessionId", { sessionId: "s2" }],
      ["principal", { principal: "bob" }],
      ["action", { action: "pubmed:fetch" }],
      ["resource", { resource: "artifact:arxiv" }],
      ["toolDefinitionHash", { toolDefinitionHash: "hash-b" }],
    ])("a key differing in %s finds nothing", async (_field, change) => {
      const store = await open();
      const g = grant();
      await store.ensure(g);
      expect(await store.find({ ...g, ...change })).toBeUndefined();
    });

    test("ensuring the same key twice, even concurrently, keeps one grant", async () => {
      const store = await open();
      const [a, b] = await Promise.all([store.ensure(grant()), store.ensure(grant())]);
      expect(a?.grant.id).toBe(b?.grant.id);
      expect([a?.created, b?.created].sort()).toEqual([false, true]);
      expect(await store.list()).toHaveLength(1);
    });

    test("a grant for a new tool definition replaces the stale one of the same resource", async () => {
      const store = await open();
      const old = grant();
      await store.ensure(old);
      const fresh = grant({ toolDefinitionHash: "hash-b" });
      expect((await store.ensure(fresh)).created).toBe(true);
      expect(await store.list()).toEqual([fresh]);
    });

    test("list is ordered by creation and filters by session", async () => {
      const store = await open();
      const late = grant({ resource: "a:b", createdAt: "2025-06-01T00:00:00.000Z" });
      const early = grant({ resource: "c:d", sessionId: "s2", createdAt: "2025-01-01T00:00:00.000Z" });
      await store.ensure(late);
      await store.ensure(early);
      expect((await store.list()).map((g) => g.id)).toEqual([early.id, late.id]);
      expect(await store.list({ sessionId: "s2" })).toEqual([early]);
      expect(await store.list({ sessionId: "nobody" })).toEqual([]);
    });

    test("revoke removes the grant once and returns it", async () => {
      const store = await open();
      const g = grant();
      await store.ensure(g);
      expect(await store.revoke(g.id)).toEqual(g);
      expect(await store.find(g)).toBeUndefined();
      expect(await store.revoke(g.id)).toBeUndefined();
      expect((await store.ensure(grant())).created).toBe(true);
    });

    test("an empty field is INVALID_INPUT and nothing is stored", async () => {
      const store = await open();
      await expect(store.ensure(grant({ resource: "" }))).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store.list()).toEqual([]);
    });

    test("a grant is its principal's: another principal's or the single user's key misses it", async () => {
      const store = await open();
      const alice = grant({ principal: "alice" });
      expect(await store.ensure(alice)).toEqual({ grant: alice, created: true });
      expect(await store.find(alice)).toEqual(alice);
      expect(await store.find({ ...alice, principal: "bob" })).toBeUndefined();
      expect(await store.find({ ...alice, principal: undefined })).toBeUndefined();
      // The same key for bob and for nobody are grants of their own; a new definition replaces only bob's.
      const bob = grant({ principal: "bob" });
      const nobody = grant();
      expect((await store.ensure(bob)).created).toBe(true);
      expect((await store.ensure(nobody)).created).toBe(true);
      const bobFresh = grant({ principal: "bob", toolDefinitionHash: "hash-b" });
      await store.ensure(bobFresh);
      expect((await store.list()).map((g) => g.id)).toEqual([alice.id, nobody.id, bobFresh.id]);
      expect(await store.list({ principal: "alice" })).toEqual([alice]);
      expect(await store.list({ principal: "bob", sessionId: "s1" })).toEqual([bobFresh]);
      expect(await store.find(nobody)).toEqual(nobody);
    });

    test("epochs count up per session, from 1", async () => {
      const store = await open();
      expect(await store.currentEpoch("s1")).toBe(0);
      const epochs = await Promise.all([store.nextEpoch("s1"), store.nextEpoch("s1"), store.nextEpoch("s1")]);
      expect(epochs.sort()).toEqual([1, 2, 3]);
      expect(await store.nextEpoch("s2")).toBe(1);
      expect(await store.currentEpoch("s1")).toBe(3);
    });

    test("a closed store rejects with UPSTREAM_UNAVAILABLE; close is idempotent", async () => {
      const store = await open();
      await store.close();
      await store.close();
      await expect(store.list()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      await expect(store.nextEpoch("s1")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    });
  });
}
