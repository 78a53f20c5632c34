/**
 * The behaviour every `SessionStateStore` must show. A shared backend (PostgreSQL for several
 * replicas) also passes `peer`, a second store over the same state, and is then checked across the two.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import type { RecordedDecision, SessionStateStore } from "../../governance/permissions/index.js";

/** Options of `describeSessionStateStoreConformance`. */
export interface SessionStateStoreConformanceOptions {
  /**
   * Opens another store over the same shared state as `first` (another replica); the suite closes it.
   * @default none: the cross-replica tests are skipped (a store of one process)
   */
  peer?: (first: SessionStateStore) => Promise<SessionStateStore> | SessionStateStore;
  /** How long a peer may take to see a change without `sync()`, in ms. @default 5000 */
  convergeWithinMs?: number;
}

function recorded(overrides: Partial<RecordedDecision> = {}): RecordedDecision {
  return {
    fingerprint: "fingerprint-1",
    decision: { decision: "allow_matching", message: "fine by me" },
    result: {
      authorizationId: "auth-1",
      decisionSource: "user_grant",
      grant: {
        id: "grant-1",
        sessionId: "s1",
        action: "filesystem:write_file",
        resource: "filesystem:write_file:dir:/tmp/x",
        createdAt: "2025-01-01T00:00:00.000Z",
        toolDefinitionHash: "hash-a",
      },
    },
    ...overrides,
  };
}

/**
 * Registers a vitest suite that checks a `SessionStateStore` implementation.
 * @param name suite title, e.g. `"PostgresSessionStateStore"`
 * @param factory returns a fresh, empty store for each test; the suite closes it afterwards
 * @param options `peer` for a shared store, and how fast peers must converge
 * @example
 * describeSessionStateStoreConformance("MemorySessionStateStore", () => new MemorySessionStateStore());
 */
export function describeSessionStateStoreConformance(
  name: string,
  factory: () => Promise<SessionStateStore> | SessionStateStore,
  options: SessionStateStoreConformanceOptions = {},
): void {
  describe(`${name} (SessionStateStore conformance)`, () => {
    const opened: SessionStateStore[] = [];
    const open = async () => {
      const store = await factory();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      // Peers first: a peer may share what the first store opened.
      await Promise.all(
        opened
          .splice(0)
          .reverse()
          .map((store) => store.close()),
      );
    });

    test("unset switches and modes read as undefined; a write reads back at once", async () => {
      const store = await open();
      expect(store.sourceSwitch("s1", "llm-wiki")).toBeUndefined();
      expect(store.approvalMode("s1")).toBeUndefined();
      await store.setSourceSwitch("s1", "llm-wiki", true);
      await store.setApprovalMode("s1", "always_allow");
      expect(store.sourceSwitch("s1", "llm-wiki")).toBe(true);
      expect(store.approvalMode("s1")).toBe("always_allow");
    });

    test("switches and modes are per session and per source, and the last write wins", async () => {
      const store = await open();
      await store.setSourceSwitch("s1", "llm-wiki", true);
      await store.setSourceSwitch("s1", "pubmed", false);
      await store.setSourceSwitch("s1", "llm-wiki", false);
      await store.setApprovalMode("s2", "always_allow");
      await store.setApprovalMode("s2", "ask_for_dangerous");
      expect(store.sourceSwitch("s1", "llm-wiki")).toBe(false);
      expect(store.sourceSwitch("s1", "pubmed")).toBe(false);
      expect(store.sourceSwitch("s2", "llm-wiki")).toBeUndefined();
      expect(store.approvalMode("s2")).toBe("ask_for_dangerous");
      expect(store.approvalMode("s1")).toBeUndefined();
    });

    test("a mode is its principal's: another principal's, or the single user's, is not read", async () => {
      const store = await open();
      await store.setApprovalMode("s1", "always_allow", "alice");
      await store.setSourceSwitch("s1", "pubmed", false);
      expect(store.approvalMode("s1", "alice")).toBe("always_allow");
      expect(store.approvalMode("s1", "bob")).toBeUndefined();
      expect(store.approvalMode("s1")).toBeUndefined();
      await store.setApprovalMode("s1", "ask_for_dangerous");
      await store.setApprovalMode("s1", "ask_for_dangerous", "bob");
      expect(store.approvalMode("s1", "alice")).toBe("always_allow");
      expect(store.listSessions()).toEqual([
        {
          sessionId: "s1",
          approvalMode: "ask_for_dangerous",
          sourceSwitches: [{ sourceId: "pubmed", enabled: false }],
        },
        { sessionId: "s1", principal: "alice", approvalMode: "always_allow", sourceSwitches: [] },
        { sessionId: "s1", principal: "bob", approvalMode: "ask_for_dangerous", sourceSwitches: [] },
      ]);
    });

    test("listSessions lists every session with a mode or a switch, ordered by id, as fresh copies", async () => {
      const store = await open();
      expect(store.listSessions()).toEqual([]);
      await store.setApprovalMode("s2", "always_allow");
      await store.setSourceSwitch("s1", "pubmed", false);
      await store.setSourceSwitch("s1", "llm-wiki", true);
      await store.setSourceSwitch("s1", "llm-wiki", false);
      await store.setSourceSwitch("s3", "arxiv", true);
      await store.setApprovalMode("s3", "ask_for_dangerous");
      const expected = [
        {
          sessionId: "s1",
          approvalMode: undefined,
          sourceSwitches: [
            { sourceId: "llm-wiki", enabled: false },
            { sourceId: "pubmed", enabled: false },
          ],
        },
        { sessionId: "s2", approvalMode: "always_allow", sourceSwitches: [] },
        {
          sessionId: "s3",
          approvalMode: "ask_for_dangerous",
          sourceSwitches: [{ sourceId: "arxiv", enabled: true }],
        },
      ];
      const listed = store.listSessions();
      expect(listed).toEqual(expected);
      expect(listed[0]?.approvalMode).toBeUndefined();
      // A caller's changes to the list change nothing in the store.
      listed[0]?.sourceSwitches.push({ sourceId: "wiki", enabled: true });
      listed.pop();
      expect(store.listSessions()).toEqual(expected);
      expect(store.sourceSwitch("s1", "wiki")).toBeUndefined();
      // The last view still answers after close (as sourceSwitch and approvalMode do).
      await store.close();
      expect(store.listSessions()).toEqual(expected);
    });

    test("a decision round-trips exactly; peek leaves it, take consumes it once and keeps it as taken", async () => {
      const store = await open();
      const decision = recorded();
      expect(store.mayHoldDecision("t1:call-1")).toBe(false);
      await store.putDecision("t1:call-1", decision);
      expect(store.mayHoldDecision("t1:call-1")).toBe(true);
      expect(await store.peekDecision("t1:call-1")).toEqual({ ...decision, taken: false });
      expect(await store.peekDecision("t1:call-2")).toBeUndefined();
      expect(await store.takeDecision("t1:call-2")).toBeUndefined();
      expect(await store.takeDecision("t1:call-1")).toEqual({ ...decision, taken: false });
      expect(store.mayHoldDecision("t1:call-1")).toBe(false);
      expect(await store.takeDecision("t1:call-1")).toEqual({ ...decision, taken: true });
      expect(await store.peekDecision("t1:call-1")).toEqual({ ...decision, taken: true });
    });

    test("a taken decision stays for its call; a decision about another call under the key waits again", async () => {
      const store = await open();
      expect(await store.putDecision("t1:call-1", recorded())).toEqual({ ...recorded(), taken: false });
      await store.takeDecision("t1:call-1");
      // The same call answered again (a second resume): it keeps the decision it runs with.
      const again = recorded({ result: { authorizationId: "auth-3", decisionSource: "user_once" } });
      expect(await store.putDecision("t1:call-1", again)).toEqual({ ...recorded(), taken: true });
      expect(store.mayHoldDecision("t1:call-1")).toBe(false);
      expect(await store.takeDecision("t1:call-1")).toEqual({ ...recorded(), taken: true });
      // Another call under the key (edited arguments): its decision waits.
      const edited = recorded({ fingerprint: "fingerprint-2" });
      expect(await store.putDecision("t1:call-1", edited)).toEqual({ ...edited, taken: false });
      expect(store.mayHoldDecision("t1:call-1")).toBe(true);
      expect(await store.takeDecision("t1:call-1")).toEqual({ ...edited, taken: false });
    });

    test("a decision recorded again for the same call replaces the first", async () => {
      const store = await open();
      await store.putDecision("t1:call-1", recorded());
      const denial = recorded({
        decision: { decision: "deny" },
        result: { authorizationId: "auth-2", decisionSource: "wait_timeout" },
        reason: "nobody answered",
      });
      await store.putDecision("t1:call-1", denial);
      expect(await store.takeDecision("t1:call-1")).toEqual({ ...denial, taken: false });
    });

    test("of concurrent takes, exactly one gets the decision untaken; the others see it taken", async () => {
      const store = await open();
      await store.putDecision("t1:call-1", recorded());
      const taken = await Promise.all([1, 2, 3, 4].map(() => store.takeDecision("t1:call-1")));
      expect(taken.filter((t) => t?.taken === false)).toEqual([{ ...recorded(), taken: false }]);
      expect(taken.filter((t) => t?.taken === true)).toHaveLength(3);
    });

    test("a closed store rejects writes and decisions with UPSTREAM_UNAVAILABLE; close is idempotent", async () => {
      const store = await open();
      await store.setSourceSwitch("s1", "llm-wiki", true);
      await store.close();
      await store.close();
      const closed = { code: "UPSTREAM_UNAVAILABLE" };
      await expect(store.setSourceSwitch("s1", "llm-wiki", false)).rejects.toMatchObject(closed);
      await expect(store.setApprovalMode("s1", "always_allow")).rejects.toMatchObject(closed);
      await expect(store.putDecision("t1:c", recorded())).rejects.toMatchObject(closed);
      await expect(store.takeDecision("t1:c")).rejects.toMatchObject(closed);
      await expect(store.sync()).rejects.toMatchObject(closed);
      // The last view still answers: a closing runtime may list tools.
      expect(store.sourceSwitch("s1", "llm-wiki")).toBe(true);
    });

    const { peer } = options;
    describe.skipIf(peer === undefined)("across two replicas", () => {
      const openPair = async (): Promise<[SessionStateStore, SessionStateStore]> => {
        const first = await open();
        const second = await (peer as NonNullable<typeof peer>)(first);
        opened.push(second);
        return [first, second];
      };
      const within = { timeout: options.convergeWithinMs ?? 5000, interval: 20 };

      test("a switch or mode written on one is read on the other, without sync() within the bound", async () => {
        const [a, b] = await openPair();
        await a.setSourceSwitch("s1", "pubmed", false);
        await a.setApprovalMode("s1", "always_allow");
        await a.setApprovalMode("s1", "always_allow", "alice");
        await vi.waitFor(() => {
          expect(b.sourceSwitch("s1", "pubmed")).toBe(false);
          expect(b.approvalMode("s1")).toBe("always_allow");
          expect(b.approvalMode("s1", "alice")).toBe("always_allow");
        }, within);
        expect(b.approvalMode("s1", "bob")).toBeUndefined();
        await b.setSourceSwitch("s1", "pubmed", true);
        await a.sync();
        expect(a.sourceSwitch("s1", "pubmed")).toBe(true);
      });

      test("the other replica lists what one wrote, without sync() within the bound", async () => {
        const [a, b] = await openPair();
        // A store other replicas read says so (an operator is told whether what they see is everyone's).
        expect([a.isShared, b.isShared]).toEqual([true, true]);
        await a.setApprovalMode("s1", "always_allow");
        await a.setSourceSwitch("s2", "pubmed", false);
        const expected = [
          { sessionId: "s1", approvalMode: "always_allow", sourceSwitches: [] },
          {
            sessionId: "s2",
            approvalMode: undefined,
            sourceSwitches: [{ sourceId: "pubmed", enabled: false }],
          },
        ];
        expect(a.listSessions()).toEqual(expected);
        await vi.waitFor(() => expect(b.listSessions()).toEqual(expected), within);
        await b.setSourceSwitch("s2", "pubmed", true);
        await a.sync();
        expect(a.listSessions()[1]?.sourceSwitches).toEqual([{ sourceId: "pubmed", enabled: true }]);
      });

      test("a decision put on one is consumed exactly once when both take at once", async () => {
        const [a, b] = await openPair();
        await a.putDecision("t1:call-1", recorded());
        expect(await b.peekDecision("t1:call-1")).toEqual({ ...recorded(), taken: false });
        const taken = await Promise.all([a, b, a, b].map((store) => store.takeDecision("t1:call-1")));
        expect(taken.filter((t) => t?.taken === false)).toEqual([{ ...recorded(), taken: false }]);
        expect(taken.filter((t) => t?.taken === true)).toHaveLength(3);
        // Taken on either replica, it stays taken on both, and a second answer cannot replace it.
        expect(await a.peekDecision("t1:call-1")).toMatchObject({ taken: true });
        const again = recorded({ result: { authorizationId: "auth-4", decisionSource: "user_once" } });
        expect(await b.putDecision("t1:call-1", again)).toEqual({ ...recorded(), taken: true });
      });

      test("a second answer racing a take on the other replica never yields a second untaken decision", async () => {
        const [a, b] = await openPair();
        for (const n of [1, 2, 3, 4, 5]) {
          const key = `t1:race-${n}`;
          await a.putDecision(key, recorded());
          const again = recorded({ result: { authorizationId: `auth-${n}`, decisionSource: "user_once" } });
          const [first] = await Promise.all([a.takeDecision(key), b.putDecision(key, again)]);
          const later = await b.takeDecision(key);
          // Exactly one take consumes a decision (the call runs once), whichever answer came last.
          expect([first, later].filter((t) => t?.taken === false)).toHaveLength(1);
        }
      });

      test("the other replica hears of a recorded decision (mayHoldDecision) within the bound", async () => {
        const [a, b] = await openPair();
        await a.putDecision("t1:call-9", recorded());
        await vi.waitFor(() => expect(b.mayHoldDecision("t1:call-9")).toBe(true), within);
      });
    });
  });
}
