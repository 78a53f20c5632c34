import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { main } from "../../src/cli/main.js";
import { parseApproveChoice } from "../../src/cli/terminal-approval.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { runCli, tempDir, testServerEntry, writeJson } from "./cli-harness.js";

/**
 * A project whose `echo` tool is not read-only: every call is dangerous.
 * @param off `session`: the source is off by default (`enabledByDefault: false`); `config`: its server is
 *   `enabled: false` in extensions_config.json
 */
function setupProject(off?: "session" | "config"): { dir: string; args: string[] } {
  const dir = tempDir();
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  writeJson(
    manifests,
    "echo.json",
    makeSource({
      id: "echo-source",
      enabledByDefault: off !== "session",
      transport: { mcpServerId: "local" },
      tools: [
        makeTool({
          id: "echo",
          mcpToolName: "echo",
          readOnly: false,
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          permission: {
            action: "echo:write",
            resourceTemplate: "echo:write:{text}",
            summaryTemplate: 'Echo "{text}" on the lab server',
          },
        }),
      ],
    }),
  );
  const config = writeJson(dir, "extensions_config.json", {
    mcpServers: { local: { ...testServerEntry(), ...(off === "config" ? { enabled: false } : {}) } },
  });
  return { dir, args: ["call", "mcp__echo-source__echo", "--config", config, "--manifests", manifests] };
}

describe("sciencegate call with approvals", () => {
  test("without a TTY and without --approve a dangerous call is not run; the refusal says how to approve", async () => {
    const { dir, args } = setupProject();
    const run = await runCli([...args, "--args", '{"text":"hi"}', "--json"], {}, dir);
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stdout);
    expect(error).toMatchObject({
      code: "PERMISSION_DENIED",
      retryable: false,
      data: {
        approvalRequired: true,
        card: { action: "echo:write", summary: 'Echo "hi" on the lab server' },
      },
    });
    expect(error.message).toContain("Approval required");
    expect(error.message).toContain("--approve once|matching|deny|always");
    expect(run.stderr).toContain("PERMISSION_DENIED");
    const audit = JSON.parse(
      (await runCli(["audit", "--json", "--config", args[3] as string], {}, dir)).stdout,
    );
    expect(audit.summary).toMatchObject({ calls: 1, ok: 0, byErrorCode: { PERMISSION_DENIED: 1 } });
  });

  test.each([
    ["once", 0, "user_once"],
    ["always", 0, "user_always"],
    ["deny", 1, "user_deny"],
  ])("--approve %s answers the card (exit %i, authorization %s)", async (approve, code, source) => {
    const { dir, args } = setupProject();
    const run = await runCli([...args, "--args", '{"text":"hi"}', "--approve", approve], {}, dir);
    expect(run.code).toBe(code);
    if (code === 0) expect(run.stdout).toMatch(/invocation [0-9a-f-]{36}/);
    else expect(run.stderr).toContain("denied by the user");
    const ledger = await SqliteLedger.open(join(dir, ".sciencegate", "ledger.sqlite"));
    try {
      const [row] = await ledger.query();
      const auths = await ledger.listAuthorizations();
      expect(row).toMatchObject({ status: code === 0 ? "ok" : "error", authorizationId: auths[0]?.id });
      expect(auths.map((a) => a.decisionSource)).toEqual([source]);
    } finally {
      await ledger.close();
    }
  });

  test("without --session, a later process is asked again: --approve matching covers only its own call's session", async () => {
    const { dir, args } = setupProject();
    const first = await runCli([...args, "--args", '{"text":"a"}', "--approve", "matching"], {}, dir);
    expect(first.code).toBe(0);
    const grants = JSON.parse((await runCli(["grants", "list", "--json"], {}, dir)).stdout);
    expect(grants.grants).toMatchObject([
      {
        action: "echo:write",
        resource: "echo:write",
        sessionId: expect.stringMatching(/^cli-[0-9a-f-]{36}$/),
      },
    ]);
    // A new process without --session is a new session: the write is put to a human (none here), not run.
    const second = await runCli([...args, "--args", '{"text":"b"}'], {}, dir);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("Approval required");
    const ledger = await SqliteLedger.open(join(dir, ".sciencegate", "ledger.sqlite"));
    try {
      const rows = await ledger.query();
      expect(rows.map((r) => r.status).sort()).toEqual(["error", "ok"]);
      expect(new Set(rows.map((r) => r.sessionId)).size).toBe(2);
    } finally {
      await ledger.close();
    }
  });

  test("--session names a session that later processes share: its grant is honoured without asking", async () => {
    const { dir, args } = setupProject();
    const session = ["--session", "lab-notebook"];
    const first = await runCli(
      [...args, ...session, "--args", '{"text":"a"}', "--approve", "matching"],
      {},
      dir,
    );
    expect(first.code).toBe(0);
    const grants = JSON.parse((await runCli(["grants", "list", "--json"], {}, dir)).stdout);
    expect(grants.grants).toMatchObject([{ action: "echo:write", sessionId: "lab-notebook" }]);
    const second = await runCli([...args, ...session, "--args", '{"text":"b"}'], {}, dir);
    expect(second.code).toBe(0);
    // Another session has no grant: it is asked (and refused without a TTY).
    const other = await runCli([...args, "--args", '{"text":"c"}', "--session", "s2"], {}, dir);
    expect(other.code).toBe(1);
  });

  test("in a TTY the card is shown and the typed answer is used; a bad answer asks again", async () => {
    const { dir, args } = setupProject();
    let stderr = "";
    let stdout = "";
    const code = await main([...args, "--args", '{"text":"tty"}'], {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
      cwd: dir,
      isTty: true,
      stdin: Readable.from(["maybe\n", "2\n"]),
    });
    expect(code).toBe(0);
    expect(stderr).toContain('Permission needed: Echo "tty" on the lab server');
    expect(stderr).toContain(
      "Allow matching covers every echo:write call, whatever its arguments, for the rest of this session.",
    );
    expect(stderr).toContain("[1] Allow once  [2] Allow matching (this session)  [3] Deny  [4] Always allow");
    expect(stderr).toContain("Answer 1-4");
    expect(stdout).toMatch(/invocation [0-9a-f-]{36}/);
    const grants = JSON.parse((await runCli(["grants", "list", "--json"], {}, dir)).stdout);
    expect(grants.grants).toHaveLength(1);
  });

  test("in a TTY, Enter alone allows this call once: the prompt says so and no grant is left", async () => {
    const { dir, args } = setupProject();
    const tty = async (text: string, input: string) => {
      let stderr = "";
      const code = await main([...args, "--args", JSON.stringify({ text })], {
        stdout: () => {},
        stderr: (t) => {
          stderr += t;
        },
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
        cwd: dir,
        isTty: true,
        stdin: Readable.from([input]),
      });
      return { code, stderr };
    };
    const first = await tty("enter", "\n");
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("Choice [1-4, Enter = 1 Allow once]");
    const grants = JSON.parse((await runCli(["grants", "list", "--json"], {}, dir)).stdout);
    expect(grants.grants).toEqual([]);
    // The next call of the same type is asked again (and end of input denies it).
    const second = await tty("again", "");
    expect(second.stderr).toContain("Permission needed");
    expect(second.code).toBe(1);
  });

  test.each([
    ["session", "--enable-source echo-source"],
    ["config", '"enabled": true for mcpServers.local in'],
  ] as const)(
    "a call to a source that is off (%s) reports SOURCE_DISABLED, as the ledger does, with how to enable it; no card is shown",
    async (off, fix) => {
      const { dir, args } = setupProject(off);
      const run = await runCli([...args, "--args", '{"text":"hi"}', "--json"], {}, dir);
      expect(run.code).toBe(1);
      const { error } = JSON.parse(run.stdout);
      expect(error.code).toBe("SOURCE_DISABLED");
      expect(error.message).toContain(fix);
      expect(run.stderr).toContain(`SOURCE_DISABLED: Source 'echo-source'`);
      const ledger = await SqliteLedger.open(join(dir, ".sciencegate", "ledger.sqlite"));
      try {
        expect(await ledger.query()).toMatchObject([{ status: "error", error: { code: "SOURCE_DISABLED" } }]);
        expect(await ledger.listAuthorizations()).toEqual([]);
      } finally {
        await ledger.close();
      }

      // A human is not asked about a call that cannot run.
      let stderr = "";
      const code = await main([...args, "--args", '{"text":"tty"}'], {
        stdout: () => {},
        stderr: (t) => {
          stderr += t;
        },
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
        cwd: dir,
        isTty: true,
        stdin: Readable.from(["1\n"]),
      });
      expect(code).toBe(1);
      expect(stderr).not.toContain("Permission needed");
      expect(stderr).toContain("SOURCE_DISABLED");
    },
  );

  test("--enable-source switches a session-disabled source on; the call then asks as usual", async () => {
    const { dir, args } = setupProject("session");
    const run = await runCli(
      [...args, "--args", '{"text":"hi"}', "--enable-source", "echo-source", "--approve", "once"],
      {},
      dir,
    );
    expect(run.code).toBe(0);
  });

  test("a bad --approve value is a usage error", async () => {
    const run = await runCli(["call", "x", "--approve", "sure"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--approve takes once, matching, deny, always");
  });

  test.each([
    ["1", "once"],
    ["Matching", "matching"],
    ["d", "deny"],
    ["4", "always"],
    ["", "once"],
    ["  ", "once"],
    ["7", undefined],
  ])("terminal answer %j reads as %s", (typed, choice) => {
    expect(parseApproveChoice(typed)).toBe(choice);
  });
});
