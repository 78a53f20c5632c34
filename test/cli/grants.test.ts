import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { LedgerWriter } from "../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { PermissionService } from "../../src/governance/permissions/permission-service.js";
import { grantStorePath, SqliteGrantStore } from "../../src/governance/permissions/sqlite-grant-store.js";
import { DOWNLOAD_TOOL, makeRequest, WRITE_TOOL } from "../governance/permissions/permission-fixtures.js";
import { runCli, tempDir, testServerEntry, writeEchoManifests, writeJson } from "./cli-harness.js";

/** A project whose data directory holds grants made by the service: s1 demo:write, s2 demo:write, s1 artifact:arxiv. */
async function projectWithGrants(): Promise<{ dir: string; ids: string[] }> {
  const dir = tempDir();
  const grants = await SqliteGrantStore.open(grantStorePath(join(dir, ".sciencegate")));
  const service = new PermissionService({ ledgerWriter: new LedgerWriter(new MemoryLedger()), grants });
  const ids: string[] = [];
  const requests = [
    makeRequest({ tool: WRITE_TOOL, sessionId: "s1", toolCallId: "a", input: { query: "a" } }),
    makeRequest({ tool: WRITE_TOOL, sessionId: "s2", toolCallId: "b", input: { query: "b" } }),
    makeRequest({
      tool: DOWNLOAD_TOOL,
      sessionId: "s1",
      toolCallId: "c",
      definitionHash: "def-2",
      input: { sourceId: "arxiv", candidateId: "p1", destinationPath: "a.pdf" },
    }),
  ];
  for (const request of requests) {
    const { grant } = await service.decide(request, { decision: "allow_matching" });
    ids.push(grant?.id ?? "");
  }
  await grants.close();
  return { dir, ids };
}

describe("sciencegate grants", () => {
  test("list --json prints every grant with its fields; --session filters", async () => {
    const { dir, ids } = await projectWithGrants();
    const all = await runCli(["grants", "list", "--json"], {}, dir);
    expect(all.code).toBe(0);
    const { grants } = JSON.parse(all.stdout);
    expect(grants.map((g: { id: string }) => g.id)).toEqual(ids);
    expect(grants[0]).toEqual({
      id: ids[0],
      action: "demo:write",
      resource: "demo:write",
      sessionId: "s1",
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      toolDefinitionHash: "def-1",
    });
    const scoped = await runCli(["grants", "--session", "s2", "--json"], {}, dir);
    expect(JSON.parse(scoped.stdout).grants.map((g: { id: string }) => g.id)).toEqual([ids[1]]);
  });

  test("the text listing shows session, action, resource and id", async () => {
    const { dir, ids } = await projectWithGrants();
    const run = await runCli(["grants"], {}, dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^3 grant\(s\):/);
    expect(run.stdout).toMatch(new RegExp(`s1 +demo:write +demo:write +def=def-1 ${ids[0]}`));
    expect(run.stdout).toMatch(new RegExp(`s1 +artifact:download +artifact:arxiv +def=def-2 ${ids[2]}`));
  });

  test("an empty data directory lists nothing and is not created", async () => {
    const dir = tempDir();
    expect((await runCli(["grants", "list"], {}, dir)).stdout).toBe("No grants.\n");
    expect(JSON.parse((await runCli(["grants", "--json"], {}, dir)).stdout)).toEqual({ grants: [] });
    expect(existsSync(join(dir, ".sciencegate"))).toBe(false);
  });

  test("revoke removes one grant for good; a later listing and a new service no longer see it", async () => {
    const { dir, ids } = await projectWithGrants();
    const run = await runCli(["grants", "revoke", ids[0] ?? "", "--json"], {}, dir);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).revoked).toMatchObject({ id: ids[0], resource: "demo:write" });
    const left = JSON.parse((await runCli(["grants", "--json"], {}, dir)).stdout).grants;
    expect(left.map((g: { id: string }) => g.id)).toEqual([ids[1], ids[2]]);
    // The change is audited in the data directory's ledger, as the console audits its own.
    const ledger = await SqliteLedger.open(join(dir, ".sciencegate", "ledger.sqlite"));
    expect(await ledger.listAuthorizations()).toEqual([
      expect.objectContaining({
        sessionId: "s1",
        action: "revoke_grant",
        resource: "demo:write",
        decisionSource: "operator_cli",
        toolId: "grant",
      }),
    ]);
    await ledger.close();

    const grants = await SqliteGrantStore.open(grantStorePath(join(dir, ".sciencegate")));
    const service = new PermissionService({ ledgerWriter: new LedgerWriter(new MemoryLedger()), grants });
    const again = makeRequest({ tool: WRITE_TOOL, toolCallId: "z", input: { query: "a" } });
    expect((await service.evaluate(again)).outcome).toBe("ask");
    const stillGranted = makeRequest({
      tool: WRITE_TOOL,
      sessionId: "s2",
      toolCallId: "y",
      input: { query: "b" },
    });
    expect(await service.evaluate(stillGranted)).toEqual({
      outcome: "allow",
      decisionSource: "existing_grant",
    });
    await grants.close();
  });

  test("revoking an unknown id, or one of another session, exits 1 with UNKNOWN_ID and keeps the grant", async () => {
    const { dir, ids } = await projectWithGrants();
    const unknown = await runCli(["grants", "revoke", "nope"], {}, dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("UNKNOWN_ID");
    const wrongSession = await runCli(["grants", "revoke", ids[1] ?? "", "--session", "s1"], {}, dir);
    expect(wrongSession.code).toBe(1);
    expect(wrongSession.stderr).toContain("in session 's1'");
    expect(JSON.parse((await runCli(["grants", "--json"], {}, dir)).stdout).grants).toHaveLength(3);
  });

  test.each([
    [["grants", "revoke"]],
    [["grants", "drop", "x"]],
    [["grants", "list", "x"]],
    [["grants", "list", "--tool", "mcp__echo-source__echo"]],
    [["grants", "add", "--session", "s1"]],
    [["grants", "add", "--tool", "mcp__echo-source__echo"]],
    [["grants", "add", "--session", " ", "--tool", "mcp__echo-source__echo"]],
    [["grants", "mode", "--session", "s1", "sometimes"]],
    [["grants", "mode", "always_allow"]],
  ])("usage error %j exits 2", async (argv) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("grants revoke ID");
    expect(run.stderr).toContain("grants add --session ID --tool NAME");
  });

  test("the usage lists the grants commands", async () => {
    const { stdout } = await runCli(["--help"]);
    expect(stdout).toContain("grants [list|revoke ID] [--session ID] [--json]");
    expect(stdout).toContain("grants add --session ID --tool NAME");
    expect(stdout).toContain("grants mode --session ID always_allow|ask_for_dangerous");
  });
});

describe("sciencegate grants add", () => {
  test("grants a session a tool bound to its live definition, with one user_grant authorization row; a scope the tool's cards never show is INVALID_INPUT", async () => {
    const dir = tempDir();
    const manifests = writeEchoManifests(dir);
    const config = writeJson(dir, "extensions_config.json", { mcpServers: { local: testServerEntry() } });
    const argv = ["grants", "add", "--session", "desk-1", "--tool", "mcp__echo-source__echo"];
    const catalog = ["--config", config, "--manifests", manifests];
    const added = await runCli([...argv, ...catalog, "--json"], {}, dir);
    expect(added.stderr).toContain("need no approval under the current policy");
    expect(added.code).toBe(0);
    const { grant, authorizationId } = JSON.parse(added.stdout);
    expect(grant).toMatchObject({
      sessionId: "desk-1",
      action: "demo:echo",
      resource: "demo:echo",
      toolDefinitionHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const listed = JSON.parse((await runCli(["grants", "--json"], {}, dir)).stdout).grants;
    expect(listed).toEqual([expect.objectContaining({ id: grant.id })]);
    const ledger = await SqliteLedger.open(join(dir, ".sciencegate", "ledger.sqlite"));
    expect(await ledger.listAuthorizations({ sessionId: "desk-1" })).toMatchObject([
      {
        id: authorizationId,
        decisionSource: "user_grant",
        sourceId: "echo-source",
        toolId: "echo",
        epoch: 1,
      },
    ]);
    await ledger.close();

    const wrong = await runCli([...argv, ...catalog, "--resource", "other:scope"], {}, dir);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      "INVALID_INPUT: --resource 'other:scope' is not a grant scope of mcp__echo-source__echo: use 'demo:echo' (every call of the tool).",
    );
  }, 60_000);
});

describe("sciencegate grants mode", () => {
  test("without SCIENCEGATE_DATABASE_URL it exits 2, saying that modes need PostgreSQL and grants work with SQLite; nothing is created", async () => {
    const dir = tempDir();
    const run = await runCli(["grants", "mode", "--session", "s1", "always_allow"], {}, dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("INVALID_CONFIG");
    expect(run.stderr).toContain("set SCIENCEGATE_DATABASE_URL to the gateway's database");
    expect(run.stderr).toContain("sciencegate grants add");
    expect(existsSync(join(dir, ".sciencegate"))).toBe(false);
  });
});
