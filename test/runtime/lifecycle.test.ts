/**
 * A runtime that is never closed does not keep its process alive: a script that creates governance
 * with a stdio server, makes a call and ends without `close()` exits within seconds of its last await,
 * with the call's row in the ledger and no server child left behind. `await using` closes it.
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, test } from "vitest";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { isAlive, repoRoot, stdioTestServer } from "../mcp/server-configs.js";

const TSX = import.meta.resolve("tsx");
/** How long after its last await the script may take to exit ("within a few seconds"). */
const EXIT_WITHIN_MS = 5_000;
/** When the test gives up on a script that does not exit (and kills it). */
const GIVE_UP_MS = 20_000;

/** A script that opens the runtime over the stdio test server, makes one call and never closes it. */
function unclosedScript(dataDir: string, toolId: string, input: Record<string, unknown>): string {
  const runtime = pathToFileURL(join(repoRoot, "src/runtime/create-governance.ts")).href;
  const configs = pathToFileURL(join(repoRoot, "test/mcp/server-configs.ts")).href;
  return `
import { createGovernance } from ${JSON.stringify(runtime)};
import { stdioTestServer } from ${JSON.stringify(configs)};
const governance = await createGovernance({
  config: { servers: [stdioTestServer("lab")] },
  manifests: { builtin: false },
  storage: { dataDir: ${JSON.stringify(dataDir)} },
  permissions: { authorize: () => ({ allowed: true }) },
});
const outcome = await governance.broker.invoke({ sourceId: "lab", toolId: ${JSON.stringify(toolId)}, input: ${JSON.stringify(input)}, sessionId: "s1" });
console.log(JSON.stringify({ invocationId: outcome.invocationId, pid: governance.pool.state("lab").pid, at: Date.now() }));
`;
}

interface ScriptRun {
  /** What the script printed after its last await. */
  last: { invocationId: string; pid: number; at: number };
  /** When the process ended, or `undefined` when it had to be killed. */
  exitedAt: number | undefined;
  code: number | null;
  stderr: string;
}

async function runUnclosedScript(
  dataDir: string,
  toolId: string,
  input: Record<string, unknown>,
): Promise<ScriptRun> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-lifecycle-"));
  const script = join(dir, "unclosed.mts");
  await writeFile(script, unclosedScript(dataDir, toolId, input));
  const child = spawn(process.execPath, ["--import", TSX, script], { cwd: repoRoot, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let killed = false;
  const deadline = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, GIVE_UP_MS + 60_000);
  const printed = new Promise<void>((resolve) => {
    child.stdout.on("data", () => {
      if (stdout.includes("\n")) resolve();
    });
    child.on("close", () => resolve());
  });
  await printed;
  // From the script's last await on, it has GIVE_UP_MS to end by itself.
  clearTimeout(deadline);
  const giveUp = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, GIVE_UP_MS);
  const code = await new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.on("close", (c) => resolve(c));
  });
  const exitedAt = killed ? undefined : Date.now();
  clearTimeout(giveUp);
  const line = stdout.split("\n").find((l) => l.startsWith("{"));
  if (!line) throw new Error(`the script printed nothing: ${stderr}`);
  return { last: JSON.parse(line) as ScriptRun["last"], exitedAt, code, stderr };
}

describe("a runtime that is never closed", () => {
  // `slow` answers after 1.5 s in which only the server works: the open call must keep the script alive.
  test.each([
    ["echo", { text: "bye" }],
    ["slow", { steps: 3, delayMs: 500 }],
  ])(
    "its script (one %s call) exits within seconds of its last await; the row is recorded, the server child gone",
    {
      timeout: 120_000,
    },
    async (toolId, input) => {
      const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-lifecycle-data-"));
      const run = await runUnclosedScript(dataDir, toolId, input);
      expect(run.exitedAt, `the process did not exit within ${GIVE_UP_MS} ms: ${run.stderr}`).toBeDefined();
      expect(run.code).toBe(0);
      expect((run.exitedAt ?? 0) - run.last.at).toBeLessThan(EXIT_WITHIN_MS);
      const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
      try {
        expect(await ledger.get(run.last.invocationId)).toMatchObject({ status: "ok", toolId });
      } finally {
        await ledger.close();
      }
      // The child's stdin closed with its parent: it ends on its own (polled: it is not our child).
      for (let i = 0; i < 100 && isAlive(run.last.pid); i++) await new Promise((r) => setTimeout(r, 50));
      expect(isAlive(run.last.pid)).toBe(false);
    },
  );
});

describe("await using", () => {
  test("closes the runtime at the end of the scope: the server child is gone", {
    timeout: 60_000,
  }, async () => {
    let pid: number | undefined;
    {
      await using governance = await createGovernance({
        config: { servers: [stdioTestServer("lab")] },
        manifests: { builtin: false },
        storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
        onWarning: () => undefined,
      });
      pid = governance.pool.state("lab").pid;
      expect(pid !== undefined && isAlive(pid)).toBe(true);
    }
    expect(pid !== undefined && isAlive(pid)).toBe(false);
  });
});
