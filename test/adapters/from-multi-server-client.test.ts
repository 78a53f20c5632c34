import { execFileSync } from "node:child_process";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { afterEach, describe, expect, test } from "vitest";
import { fromMultiServerMCPClient } from "../../src/adapters/from-multi-server-client.js";
import { createMultiServerClientPool } from "../../src/adapters/multi-server-client-pool.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import { executeGovernedToolCall } from "../../src/nodes/execute-tool-call.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { promote, promotionReducer } from "../../src/visibility/promotion.js";
import { isAlive, testServerPath } from "../mcp/server-configs.js";

/** Pids of this process's children that run the test server (a second spawn would be one more). */
function testServerChildren(): string[] {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(testServerPath));
}

// A loader URL, so the child finds tsx whatever its working directory.
const tsxLoader = import.meta.resolve("tsx");

function newClient(env: Record<string, string> = {}): MultiServerMCPClient {
  return new MultiServerMCPClient({
    mcpServers: {
      lab: {
        transport: "stdio",
        command: process.execPath,
        args: ["--import", tsxLoader, testServerPath],
        env,
      },
    },
  });
}

let governance: Governance | undefined;
let pool: ToolServerPool | undefined;
afterEach(async () => {
  await governance?.close();
  await pool?.close();
  governance = undefined;
  pool = undefined;
});

async function govern(client: MultiServerMCPClient): Promise<Governance> {
  governance = await fromMultiServerMCPClient(client, {
    manifests: { builtin: false },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
    permissions: {
      // The tools have derived, fail-closed manifests (dangerous); these tests are about the pool.
      authorize: () => ({ allowed: true }),
    },
  });
  return governance;
}

async function call(g: Governance, id: string, name: string, args: Record<string, unknown>) {
  const tools = g.tools("s1");
  const promotion = promotionReducer(undefined, promote([name], tools));
  return executeGovernedToolCall(g, { id, name, args }, { sessionId: "s1", threadId: "t1", promotion });
}

describe("fromMultiServerMCPClient", () => {
  test("lists the client's tools through its raw SDK client, all deferred, under derived manifests", async () => {
    const g = await govern(newClient({ TEST_SERVER_FILLER_TOOLS: "5", TEST_SERVER_PAGE_SIZE: "4" }));
    const names = g.tools("s1").map((t) => t.name);
    // 7 tools + 5 fillers over 3 pages of 4: paging followed to the end.
    expect(names).toHaveLength(12);
    expect(names).toEqual(expect.arrayContaining(["mcp__lab__echo", "mcp__lab__filler_005"]));
    expect(g.tools("s1").every((t) => t.deferred)).toBe(true);
    // Fail closed: nothing in the live list says read-only, so no derived tool is.
    expect(g.tools("s1").some((t) => t.readOnly)).toBe(false);
    expect(g.catalog.source("lab")?.status).toBe("ready");
    expect(g.pool.state("lab")).toMatchObject({ transport: "stdio", status: "connected", starts: 1 });
  });

  test("a governed call goes through the broker to the server and lands in the ledger", async () => {
    const g = await govern(newClient());
    const { message } = await call(g, "c1", "mcp__lab__echo", { text: "hello lab" });
    expect(message.status).not.toBe("error");
    expect(message.content).toContain("hello lab");
    expect(await g.ledger.query()).toMatchObject([
      { sourceId: "lab", toolId: "echo", toolCallId: "c1", threadId: "t1", status: "ok" },
    ]);
  });

  test("tools/list_changed from the server refreshes the catalog", async () => {
    const g = await govern(newClient());
    const revision = g.catalog.revision;
    await call(g, "c1", "mcp__lab__add_tool", { name: "fresh" });
    await expect.poll(() => g.tools("s1").some((t) => t.name === "mcp__lab__fresh")).toBe(true);
    expect(g.catalog.revision).not.toBe(revision);
  });

  test("close() closes the client and leaves no child process", async () => {
    const g = await govern(newClient());
    const pid = g.pool.state("lab").pid;
    expect(pid).toBeTypeOf("number");
    expect(isAlive(pid as number)).toBe(true);
    await g.close();
    governance = undefined;
    await expect.poll(() => isAlive(pid as number)).toBe(false);
    expect(g.pool.state("lab").status).toBe("closed");
    await expect(g.pool.listTools("lab")).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
  });
});

describe("createMultiServerClientPool", () => {
  test("concurrent first calls start the server once", async () => {
    const lab = createMultiServerClientPool(newClient());
    pool = lab;
    const results = await Promise.all([1, 2, 3].map(() => lab.callTool("lab", "whoami", {})));
    const pids = new Set(results.map((r) => (r.content[0] as { text: string }).text));
    expect(pids.size).toBe(1);
    expect(lab.state("lab").starts).toBe(1);
    expect(testServerChildren()).toHaveLength(1);
  });

  test("a server that fails to start is reported failed with the reason, as UPSTREAM_UNAVAILABLE", async () => {
    pool = createMultiServerClientPool(newClient({ TEST_SERVER_FAIL_AT_START: "no licence key" }));
    await expect(pool.listTools("lab")).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: true,
    });
    expect(pool.state("lab").status).toBe("failed");
    expect(() => pool?.state("nope")).toThrow(/Unknown MCP server 'nope'/);
  });
});
