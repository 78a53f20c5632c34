/**
 * A hostile MCP server cannot drive the terminal of whoever runs `sciencegate`: its tool names,
 * descriptions, results, errors and stderr carry an OSC window title, a screen clear, a carriage
 * return, a line feed that forges a line, a bidi override and a one-byte CSI, and so do a caller's
 * session id, a job's destination and error, and a grant. Every command prints them inert: no raw
 * control or bidi character, no line that starts with the forged text, and `--json` still parses to
 * the original text.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import { main } from "../../src/cli/main.js";
import { terminalBlock, terminalLine, terminalText } from "../../src/cli/terminal-text.js";
import { SqliteGrantStore } from "../../src/governance/permissions/sqlite-grant-store.js";
import { makeJob } from "../artifacts/download-harness.js";
import { HOSTILE_TEXT, HOSTILE_TOOL_NAME } from "../fixtures/servers/hostile-terminal-server.js";
import { REPO_ROOT, runCli, TSX_LOADER, tempDir, writeJson } from "./cli-harness.js";

const run = promisify(execFile);
const HOSTILE_SERVER = join(REPO_ROOT, "test/fixtures/servers/hostile-terminal-server.ts");
const RAW =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the raw controls are what must not be printed
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/** Fails when `text` holds a raw control, escape or bidi character, or a line the attack forged. */
function expectInert(text: string): void {
  expect(text).not.toMatch(RAW);
  expect(text).not.toMatch(/^FORGED/m);
}

/**
 * A project whose `config` runs the hostile server and a copy of it that fails at start, and whose
 * `single` config runs the hostile server alone (each start of a tsx server takes a second or two).
 */
function hostileProject() {
  const dir = tempDir();
  const entry = (env: Record<string, string> = {}) => ({
    command: process.execPath,
    args: ["--import", TSX_LOADER, HOSTILE_SERVER],
    env,
  });
  const config = writeJson(dir, "extensions_config.json", {
    mcpServers: { hostile: entry(), broken: entry({ HOSTILE_FAIL_AT_START: "1" }) },
  });
  const single = writeJson(dir, "single.json", { mcpServers: { hostile: entry() } });
  return { dir, config, single };
}

describe("terminal text", () => {
  test("a field is one inert line; a block keeps its own lines, indented; a line's template stays", () => {
    expect(terminalText(HOSTILE_TEXT)).toBe(
      "ok\\u001b]0;PWNED-TITLE\\u0007\\u001b[2J\\u001b[H\\r\\nFORGED: all checks passed\\u202egnp.exe\\u009b31m",
    );
    expect(terminalBlock("2 problems:\n  - a\u001b[2J\n- b")).toBe("2 problems:\n    - a\\u001b[2J\n  - b");
    expect(terminalLine`name ${"a\nb"}: ${42}\n`).toBe("name a\\nb: 42\n");
  });
});

describe("the sciencegate process's own stderr", () => {
  test("what a library part writes straight to process.stderr is inert once processIo has run", async () => {
    const io = join(REPO_ROOT, "src/cli/io.ts");
    const script = `const { processIo } = await import(${JSON.stringify(io)});
      process.stderr.write("before " + ${JSON.stringify(HOSTILE_TEXT)} + "\\n");
      processIo();
      process.stderr.write("after " + ${JSON.stringify(HOSTILE_TEXT)} + "\\n");`;
    const { stderr } = await run(process.execPath, [
      "--import",
      TSX_LOADER,
      "--input-type=module",
      "-e",
      script,
    ]);
    const [before, after] = stderr.split(/\n(?=after )/);
    // Before the guard the raw attack reaches the terminal (what an app's own stderr keeps).
    expect(before).toContain("\u001b]0;PWNED-TITLE");
    // After it, no control reaches the terminal (line breaks stay: the guard cannot tell a message's own).
    expect(after).not.toMatch(RAW);
    expect(after).toContain("after ok\\u001b]0;PWNED-TITLE\\u0007");
  });
});

describe("every CLI command prints third-party text inert", () => {
  test("tools, tools --json, search-tools, call (result and error line) and audit", async () => {
    const { dir, config, single } = hostileProject();
    const tools = await runCli(["tools", "--config", config], {}, dir);
    expect(tools.code).toBe(0);
    expectInert(tools.stdout + tools.stderr);
    // It was printed, made visible: the description and the failed server's stderr and reason.
    expect(tools.stdout).toContain("Looks things up. ok\\u001b]0;PWNED-TITLE\\u0007");
    expect(tools.stdout).toContain("stderr| ok\\u001b]0;PWNED-TITLE");
    expect(tools.stderr).toContain("warning: server 'broken' unavailable");

    const json = await runCli(["tools", "--config", config, "--json"], {}, dir);
    expectInert(json.stdout + json.stderr);
    const report = JSON.parse(json.stdout) as { tools: { description: string }[] };
    expect(report.tools.map((t) => t.description)).toContain(`Looks things up. ${HOSTILE_TEXT}`);

    const search = await runCli(["search-tools", "looks things up", "--config", single], {}, dir);
    expect(search.code).toBe(0);
    expectInert(search.stdout + search.stderr);
    expect(search.stdout).toContain("mcp__hostile__lookup");

    const session = `s\u001b]0;SESSION\u0007\nFORGED: session`;
    const call = (name: string, extra: string[] = []) =>
      runCli(["call", name, "--config", single, "--session", session, "--args", "{}", ...extra], {}, dir);
    const looked = await call("mcp__hostile__lookup");
    expect(looked.code).toBe(0);
    expectInert(looked.stdout + looked.stderr);
    expect(looked.stdout).toContain("PWNED-TITLE");
    const failed = await call("mcp__hostile__fail");
    expect(failed.code).toBe(1);
    expectInert(failed.stdout + failed.stderr);
    expect(failed.stderr).toMatch(/^sciencegate call: TOOL_FAILED: .*ok\\u001b\]0;PWNED-TITLE/m);
    const failedJson = await call("mcp__hostile__fail", ["--json"]);
    expectInert(failedJson.stdout + failedJson.stderr);
    expect(JSON.parse(failedJson.stdout).error.message).toBe(HOSTILE_TEXT);

    const audit = await runCli(["audit"], {}, dir);
    expect(audit.code).toBe(0);
    expectInert(audit.stdout + audit.stderr);
    expect(audit.stdout).toContain("s\\u001b]0;SESSION\\u0007\\nFORGED: session");
  }, 120_000);

  test("the approval prompt of a dangerous tool with a hostile name and hostile arguments", async () => {
    const { dir, single } = hostileProject();
    let stderr = "";
    let stdout = "";
    const code = await main(
      [
        "call",
        `hostile.${HOSTILE_TOOL_NAME}`,
        "--config",
        single,
        "--args",
        JSON.stringify({ text: HOSTILE_TEXT }),
      ],
      {
        stdout: (t) => {
          stdout += t;
        },
        stderr: (t) => {
          stderr += t;
        },
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
        cwd: dir,
        isTty: true,
        stdin: Readable.from(["3\n"]),
      },
    );
    expect(code).toBe(1);
    expect(stderr).toContain("Permission needed:");
    expect(stderr).toContain("PWNED-NAME");
    expectInert(stdout + stderr);
  }, 60_000);

  test("jobs and grants: a destination, an error, a session and a grant scope", async () => {
    const dir = tempDir();
    const data = join(dir, ".sciencegate");
    const jobs = await SqliteDownloadJobStore.open(join(data, "jobs.sqlite"));
    await jobs.create({
      ...makeJob("job-1", "failed"),
      destinationPath: `papers/${HOSTILE_TEXT}.pdf`,
      error: { code: "UPSTREAM_UNAVAILABLE", message: HOSTILE_TEXT, retryable: true },
    });
    await jobs.close();
    const grants = await SqliteGrantStore.open(join(data, "grants.sqlite"));
    await grants.ensure({
      id: "g1",
      sessionId: `s\u001b[2J${HOSTILE_TEXT}`,
      action: "hostile:write",
      resource: `hostile:write:${HOSTILE_TEXT}`,
      createdAt: "2026-01-01T00:00:00.000Z",
      toolDefinitionHash: "0".repeat(64),
    });
    await grants.close();

    const listed = await runCli(["jobs"], {}, dir);
    expect(listed.code).toBe(0);
    expectInert(listed.stdout + listed.stderr);
    expect(listed.stdout.trim().split("\n")).toHaveLength(1);
    const listedJson = await runCli(["jobs", "--json"], {}, dir);
    expectInert(listedJson.stdout);
    expect(JSON.parse(listedJson.stdout).jobs[0].error.message).toBe(HOSTILE_TEXT);
    const cancelled = await runCli(["jobs", "cancel", "job-1"], {}, dir);
    expectInert(cancelled.stdout + cancelled.stderr);

    const granted = await runCli(["grants"], {}, dir);
    expect(granted.code).toBe(0);
    expectInert(granted.stdout + granted.stderr);
    expect(granted.stdout.trim().split("\n")).toHaveLength(2);
    const revoked = await runCli(["grants", "revoke", "g1"], {}, dir);
    expect(revoked.code).toBe(0);
    expectInert(revoked.stdout + revoked.stderr);
  });
});
