/**
 * Out-of-band approval of a running gateway: `sciencegate serve gateway` as a real process, a client
 * without elicitation, and the `sciencegate grants add` command its refusal names, run as printed by a
 * shell (the CLI from source behind a `sciencegate` on the PATH) against the same data directory.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test, vi } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { REPO_ROOT, TSX_LOADER, tempDir, testServerEntry, writeJson } from "../cli/cli-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { GATEWAY_COMMAND } from "./gateway-project.js";

/** A project whose source `local` has `shout`: the test server's `echo`, not read-only (dangerous). */
function writeProject() {
  const dir = tempDir();
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  writeJson(
    manifests,
    "local.json",
    makeSource({
      id: "local",
      transport: { mcpServerId: "local" },
      cache: { enabled: false, ttlSeconds: 0 },
      tools: [
        makeTool({
          id: "shout",
          mcpToolName: "echo",
          readOnly: false,
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        }),
      ],
    }),
  );
  const config = writeJson(dir, "extensions_config.json", { mcpServers: { local: testServerEntry() } });
  // `sciencegate` on the PATH: the CLI from source, as an installed package would run it.
  const bin = join(dir, "bin");
  mkdirSync(bin);
  const cli = join(bin, "sciencegate");
  writeFileSync(
    cli,
    `#!/bin/sh\nexec "${process.execPath}" --import "${TSX_LOADER}" "${join(REPO_ROOT, "src/cli/main.ts")}" "$@"\n`,
  );
  chmodSync(cli, 0o755);
  const dataDir = join(dir, ".sciencegate");
  return {
    dir,
    dataDir,
    args: ["--eager", "--config", config, "--manifests", manifests],
    env: {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      HOME: process.env.HOME ?? "",
      SCIENCEGATE_HOME: dataDir,
    },
  };
}

/** Runs a command line in `sh` from another directory, as a person would paste it. */
function runShell(
  command: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: tempDir(),
      env: { PATH: env.PATH, HOME: env.HOME },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("out-of-band approval of a client without elicitation", () => {
  test("the refusal names `sciencegate grants add` for this session without the gateway's paths; the complete command in the gateway's log, run from a shell, makes the retry succeed", async () => {
    const project = writeProject();
    const transport = new StdioClientTransport({
      command: GATEWAY_COMMAND.command,
      args: [...GATEWAY_COMMAND.args, ...project.args],
      env: project.env,
      cwd: project.dir,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const client = new Client({ name: "no-elicitation-client", version: "1.0.0" });
    await client.connect(transport);
    const call = async () =>
      (await client.callTool({ name: "mcp__local__shout", arguments: { text: "hello" } })) as CallToolResult;
    try {
      const refused = await call();
      expect(refused.isError).toBe(true);
      const body = refused.structuredContent as {
        code: string;
        message: string;
        data: { approve: { grant: string; mode?: string }; card: { matchingScope: { resource: string } } };
      };
      expect(body.code).toBe("PERMISSION_DENIED");
      const { grant } = body.data.approve;
      expect(grant).toMatch(
        /^sciencegate grants add --session gateway:[0-9a-f-]{36} --tool mcp__local__shout --resource demo:shout$/,
      );
      expect(body.message).toContain(`the gateway's operator runs \`${grant}\``);
      // No path of the gateway's machine reaches the client.
      expect(JSON.stringify(refused)).not.toContain(project.dataDir);
      expect(JSON.stringify(refused)).not.toContain(project.dir);
      // SQLite: approval modes live in the gateway's memory, so no mode command is offered.
      expect(body.data.approve.mode).toBeUndefined();

      // The operator reads the complete command in the gateway's log.
      const logged = await vi.waitFor(() => {
        const match = /needs approval: run (.*)$/m.exec(stderr);
        if (!match?.[1]) throw new Error(`no command logged yet: ${stderr}`);
        return match[1];
      });
      expect(logged).toMatch(
        /^SCIENCEGATE_HOME=\S+ sciencegate grants add --session gateway:[0-9a-f-]{36} --tool mcp__local__shout --resource demo:shout --config \S+ --manifests \S+$/,
      );
      expect(logged).toContain(`SCIENCEGATE_HOME=${project.dataDir} ${grant} `);

      const granted = await runShell(logged, project.env);
      expect(granted.out).toContain("Granted in session gateway:");
      expect(granted.code).toBe(0);

      const retried = await call();
      expect(retried.isError).toBeUndefined();
      expect(retried.content).toMatchObject([{ type: "text", text: expect.stringContaining("hello") }]);
    } finally {
      await client.close();
    }

    const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
    try {
      const rows = (await ledger.query()).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
      expect(rows.map((r) => [r.toolId, r.status, r.error?.code])).toEqual([
        ["shout", "error", "PERMISSION_DENIED"],
        ["shout", "ok", undefined],
      ]);
      const authorizations = await ledger.listAuthorizations({ sessionId: rows[0]?.sessionId ?? "" });
      expect(authorizations).toMatchObject([
        { decisionSource: "user_grant", action: "demo:shout", resource: "demo:shout", epoch: 1 },
        { decisionSource: "existing_grant", toolCallId: rows[1]?.toolCallId, epoch: 2 },
      ]);
      expect(authorizations[0]?.toolCallId).toBeUndefined();
      expect(rows[1]?.authorizationId).toBe(authorizations[1]?.id);
    } finally {
      await ledger.close();
    }
  }, 90_000);
});
