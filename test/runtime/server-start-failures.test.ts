/**
 * A server that cannot start is visible to the app: a line in `governance.warnings` naming the server
 * and the reason, an error with `mcp.failOnError` (or the config's `throwOnLoadError: true`), and a
 * `tool_search` that finds nothing says which sources are down.
 */
import { readFileSync } from "node:fs";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { describe, expect, test } from "vitest";
import { fromMultiServerMCPClient } from "../../src/adapters/from-multi-server-client.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { executeGovernedToolCall } from "../../src/nodes/execute-tool-call.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { mergeGovernanceOptions } from "../../src/runtime/index.js";
import { isAlive, serverConfig, stdioTestServer, testServerPath } from "../mcp/server-configs.js";

/** A stdio server whose command is misspelt: spawning it fails with ENOENT. */
const misspelt = serverConfig({ id: "files", transport: "stdio", command: "sciencegate-no-such-command" });

function options(extra: Partial<GovernanceOptions> = {}): GovernanceOptions {
  return mergeGovernanceOptions(
    {
      manifests: { builtin: false },
      storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
      onWarning: () => undefined,
    },
    extra,
  );
}

async function withGovernance<T>(
  opts: GovernanceOptions,
  work: (governance: Governance) => Promise<T>,
): Promise<T> {
  const governance = await createGovernance(opts);
  try {
    return await work(governance);
  } finally {
    await governance.close();
  }
}

describe("a server whose command is misspelt", () => {
  test("is a warning in governance.warnings (and onWarning) naming the server and spawn's ENOENT; the other server works", async () => {
    const heard: string[] = [];
    await withGovernance(
      options({
        config: { servers: [misspelt, stdioTestServer("lab")] },
        onWarning: (line) => heard.push(line),
      }),
      async (governance) => {
        expect(governance.warnings).toEqual([
          "warning: server 'files' unavailable: could not be started: spawn sciencegate-no-such-command ENOENT",
        ]);
        expect(heard).toEqual(governance.warnings);
        expect(governance.catalog.source("lab")?.status).toBe("ready");
      },
    );
  }, 60_000);

  test("every server answering: no warning", async () => {
    await withGovernance(options({ config: { servers: [stdioTestServer("lab")] } }), async (governance) => {
      expect(governance.warnings).toEqual([]);
    });
  }, 60_000);

  test("mcp.failOnError: true throws UPSTREAM_UNAVAILABLE naming it, and leaves no child of the good server", async () => {
    const good = stdioTestServer("lab");
    const error = await createGovernance(
      options({ config: { servers: [good, misspelt] }, mcp: { failOnError: true } }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining(
        "1 MCP server could not start: 'files' (could not be started: spawn sciencegate-no-such-command ENOENT)",
      ),
      data: { servers: [{ serverId: "files", reason: expect.stringContaining("ENOENT") }] },
    });
    expect(testServerChildren()).toEqual([]);
  }, 60_000);

  test.each([
    [true, "throws"],
    [false, "warns"],
  ])(
    "the config's throwOnLoadError: %s %s (the MultiServerMCPClient key keeps its meaning)",
    async (flag) => {
      const config = {
        throwOnLoadError: flag,
        mcpServers: { files: { command: "sciencegate-no-such-command" } },
      };
      const opened = createGovernance(options({ config }));
      if (flag) {
        await expect(opened).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
        return;
      }
      const governance = await opened;
      expect(governance.warnings).toHaveLength(1);
      await governance.close();
    },
  );

  test("mcp.failOnError: false wins over the config's throwOnLoadError: true", async () => {
    const config = {
      throwOnLoadError: true,
      mcpServers: { files: { command: "sciencegate-no-such-command" } },
    };
    await withGovernance(options({ config, mcp: { failOnError: false } }), async (governance) => {
      expect(governance.warnings).toEqual([expect.stringContaining("warning: server 'files' unavailable")]);
    });
  });
});

describe("fromMultiServerMCPClient follows the client's own setting", () => {
  const client = (onConnectionError?: "throw" | "ignore") =>
    new MultiServerMCPClient({
      mcpServers: { files: { transport: "stdio", command: "sciencegate-no-such-command", args: [] } },
      ...(onConnectionError ? { onConnectionError } : {}),
    });

  test("by default (onConnectionError 'throw', throwOnLoadError true) a server that cannot start throws", async () => {
    await expect(fromMultiServerMCPClient(client(), options())).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining("'files'"),
    });
  });

  test("onConnectionError 'ignore' makes it a warning", async () => {
    const governance = await fromMultiServerMCPClient(client("ignore"), options());
    try {
      expect(governance.warnings).toEqual([expect.stringMatching(/^warning: server 'files' unavailable: /)]);
    } finally {
      await governance.close();
    }
  });
});

describe("tool_search over a session with a dead source", () => {
  test("finding nothing names the unavailable source (not its command or error); with every source up it does not", async () => {
    const search = async (governance: Governance) => {
      const outcome = await executeGovernedToolCall(
        governance,
        { id: "s1", name: "tool_search", args: { query: "zzzz nothing like this" } },
        { sessionId: "t1", threadId: "t1", promotion: { promoted: {} } },
      );
      return JSON.parse(String(outcome.message.content)) as { hint?: string };
    };
    await withGovernance(options({ config: { servers: [misspelt, stdioTestServer("lab")] } }), async (g) => {
      const { hint } = await search(g);
      expect(hint).toContain(
        "These sources are unavailable right now, so their tools cannot be found: files.",
      );
      expect(hint).not.toContain("ENOENT");
      expect(hint).not.toContain("sciencegate-no-such-command");
    });
    await withGovernance(options({ config: { servers: [stdioTestServer("lab")] } }), async (g) => {
      const { hint } = await search(g);
      expect(hint).toMatch(/^No tool matched\./);
      expect(hint).not.toContain("unavailable");
    });
  }, 60_000);
});

/** Pids of live test-server children of this process. */
function testServerChildren(): number[] {
  return childPids().filter((pid) => isAlive(pid) && commandLineOf(pid).includes(testServerPath));
}

function childPids(): number[] {
  try {
    const text = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8");
    return text.split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}
