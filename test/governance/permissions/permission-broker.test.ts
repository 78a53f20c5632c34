import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import type { InvokeRequest } from "../../../src/governance/broker/broker-types.js";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import { createAuthorizationRequest } from "../../../src/governance/permissions/permission-request.js";
import { PermissionService } from "../../../src/governance/permissions/permission-service.js";
import type { PermissionPolicy } from "../../../src/governance/permissions/permission-types.js";
import { createGovernance, type Governance } from "../../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../../src/testing/in-memory-pool.js";
import { createHarness, demoResult, type Harness } from "../broker/broker-harness.js";
import { makeSource, makeTool } from "../manifests/manifest-factory.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Grants in memory whose epoch increments wait between `gate()` and `ungate()`, or fail once `failing` is set. */
class GatedGrantStore extends MemoryGrantStore {
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;
  failing = false;
  asked = 0;
  gate(): void {
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
  }
  ungate(): void {
    this.#open?.();
    this.#gate = undefined;
  }
  override async nextEpoch(sessionId: string): Promise<number> {
    this.asked++;
    await this.#gate;
    if (this.failing) throw new Error("grant store unreachable");
    return super.nextEpoch(sessionId);
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(check()).toBe(true);
}

async function setup(
  policy: PermissionPolicy = {},
  grants: MemoryGrantStore = new MemoryGrantStore(),
): Promise<{ h: Harness; permissions: PermissionService }> {
  let permissions: PermissionService | undefined;
  // The service needs the harness's ledger, the harness needs the service's hook: bind late.
  const h = await createHarness({
    authorize: (request) => (permissions as PermissionService).authorize(request),
  });
  harness = h;
  permissions = new PermissionService({ ledgerWriter: h.writer, grants, policy });
  return { h, permissions };
}

const call = (toolId: string, toolCallId: string, extra: Partial<InvokeRequest> = {}): InvokeRequest => ({
  sourceId: "demo",
  toolId,
  input: { query: "brca1" },
  sessionId: "s1",
  toolCallId,
  ...extra,
});

describe("PermissionService as the broker's hook", () => {
  test("a safe call starts only once its authorization row is numbered and held; both rows share its epoch", async () => {
    const grants = new GatedGrantStore();
    const { h } = await setup({}, grants);
    grants.gate();
    let settled = false;
    const running = h.broker.invoke(call("search", "c1")).finally(() => {
      settled = true;
    });
    await until(() => grants.asked === 1);
    // The epoch is asked for; until it comes, nothing is sent upstream.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(h.state.calls.search).toBeUndefined();
    expect(settled).toBe(false);
    grants.ungate();
    await running;
    expect(h.state.calls.search).toBe(1);
    const [authorization] = await h.ledger.listAuthorizations();
    expect(authorization).toMatchObject({ decisionSource: "policy_not_dangerous", epoch: 1 });
    expect((await h.ledger.query())[0]?.authorizationId).toBe(authorization?.id);
  });

  test("a safe call whose epoch cannot be taken is refused before any I/O, with no authorization row", async () => {
    const grants = new GatedGrantStore();
    grants.failing = true;
    const { h } = await setup({}, grants);
    await expect(h.broker.invoke(call("search", "c1"))).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("grant store unreachable"),
    });
    expect(h.state.calls.search).toBeUndefined();
    expect(await h.ledger.listAuthorizations()).toEqual([]);
    const [refused] = await h.ledger.query();
    expect(refused).toMatchObject({ status: "error", error: { code: "PERMISSION_DENIED" } });
    expect(refused?.authorizationId).toBeUndefined();
  });

  test("a dangerous tool is refused with approval required before any I/O; allow_once lets it run once", async () => {
    const { h, permissions } = await setup();
    const refused = h.broker.invoke(call("write", "c1"));
    await expect(refused).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("approval required"),
    });
    expect(h.state.calls.write).toBeUndefined();
    const [denied] = await h.ledger.query();
    expect(denied).toMatchObject({ status: "error", error: { code: "PERMISSION_DENIED" } });
    expect(denied?.authorizationId).toBeUndefined();

    const request = createAuthorizationRequest(h.catalog, call("write", "c1"));
    const { authorizationId } = await permissions.decide(request, { decision: "allow_once" });
    const outcome = await h.broker.invoke(call("write", "c1"));
    expect(outcome.result.records[0]?.identifier).toBe("w");
    expect(h.state.calls.write).toBe(1);
    const rows = await h.ledger.query({ status: "ok" });
    expect(rows).toMatchObject([{ toolId: "write", authorizationId }]);

    await expect(h.broker.invoke(call("write", "c1"))).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(h.state.calls.write).toBe(1);
  });

  test("an approval gate decides before invoking; a resumed thread replays instead of running again", async () => {
    const { h, permissions } = await setup();
    const invoke = call("write", "c1", { threadId: "t1" });
    const request = createAuthorizationRequest(h.catalog, invoke);
    const verdict = await permissions.evaluate(request);
    expect(verdict).toMatchObject({
      outcome: "ask",
      card: { toolCallId: "c1", risk: "write", summary: "Run write" },
    });
    await permissions.decide(request, { decision: "allow_once" });
    expect((await h.broker.invoke(invoke)).replayed).toBe(false);
    expect((await h.broker.invoke(invoke)).replayed).toBe(true);
    expect(h.state.calls.write).toBe(1);
    expect((await h.ledger.listAuthorizations()).map((a) => a.decisionSource)).toEqual(["user_once"]);
  });

  test("a denied decision reaches the caller as PERMISSION_DENIED with the human's message", async () => {
    const { h, permissions } = await setup();
    const invoke = call("write", "c1", { threadId: "t1" });
    const { authorizationId } = await permissions.decide(createAuthorizationRequest(h.catalog, invoke), {
      decision: "deny",
      message: "not on production data",
    });
    await expect(h.broker.invoke(invoke)).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("denied by the user: not on production data"),
    });
    expect(h.state.calls.write).toBeUndefined();
    expect((await h.ledger.findByCall("t1", "c1"))?.authorizationId).toBe(authorizationId);
  });

  test("a cache hit still needs permission", async () => {
    const { h, permissions } = await setup({ strict: true });
    const approve = (toolCallId: string) =>
      permissions.decide(createAuthorizationRequest(h.catalog, call("search", toolCallId)), {
        decision: "allow_once",
      });
    await approve("c1");
    expect((await h.broker.invoke(call("search", "c1"))).cacheHit).toBe(false);
    await expect(h.broker.invoke(call("search", "c2"))).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    await approve("c2");
    expect((await h.broker.invoke(call("search", "c2"))).cacheHit).toBe(true);
    expect(h.state.calls.search).toBe(1);
    const rows = await h.ledger.query();
    expect(rows.map((r) => [r.status, r.cacheHit])).toEqual([
      ["ok", false],
      ["error", false],
      ["ok", true],
    ]);
  });

  test("read-only public calls pass with a policy_not_dangerous row referenced by the invocation", async () => {
    const { h } = await setup();
    await h.broker.invoke(call("search", "c1"));
    const [auth] = await h.ledger.listAuthorizations();
    const [row] = await h.ledger.query();
    expect(auth).toMatchObject({ decisionSource: "policy_not_dangerous", resource: "demo:search", epoch: 1 });
    expect(row?.authorizationId).toBe(auth?.id);
  });
});

describe("createGovernance with permissions.enforce", () => {
  const calls = { write: 0 };
  const manifests = mkdtempSync(join(tmpdir(), "sciencegate-perm-manifests-"));
  writeFileSync(
    join(manifests, "demo.json"),
    JSON.stringify(
      makeSource({
        cache: { enabled: false, ttlSeconds: 0 },
        tools: [makeTool({ id: "write", readOnly: false })],
      }),
    ),
  );
  const server = () => {
    const s = new McpServer({ name: "demo", version: "1.0.0" });
    s.registerTool(
      "write",
      { inputSchema: { query: z.string(), limit: z.number().int().optional() } },
      async () => {
        calls.write++;
        const result = demoResult("write", ["w"]);
        return {
          content: [{ type: "text", text: JSON.stringify(result) }],
          structuredContent: result as never,
        };
      },
    );
    return s;
  };
  const open = (dataDir: string): Promise<Governance> =>
    createGovernance({
      config: { servers: [] },
      manifests: { builtin: false, dirs: [manifests] },
      mcp: { pool: createInMemoryPool({ demo: server }) },
      storage: { contentStore: new MemoryContentStore(), dataDir },
      permissions: { enforce: true },
    });

  test("a grant made in one runtime is honoured by a new runtime on the same data directory", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-perm-data-"));
    const first = await open(dataDir);
    await expect(first.broker.invoke(call("write", "c0"))).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    const request = createAuthorizationRequest(first.catalog, call("write", "c1", { threadId: "t1" }));
    await first.permissions.decide(request, { decision: "allow_matching" });
    await first.broker.invoke(call("write", "c1", { threadId: "t1" }));
    await first.close();
    expect(calls.write).toBe(1);

    const second = await open(dataDir);
    try {
      const outcome = await second.broker.invoke(call("write", "c2", { threadId: "t2" }));
      expect(outcome.replayed).toBe(false);
      expect(calls.write).toBe(2);
      const rows = await second.ledger.listAuthorizations({ sessionId: "s1" });
      expect(rows.map((r) => [r.toolCallId, r.decisionSource, r.epoch])).toEqual([
        ["c1", "user_grant", 1],
        ["c2", "existing_grant", 2],
      ]);
    } finally {
      await second.close();
    }
  });
});
