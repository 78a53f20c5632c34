import { access, mkdtemp, readFile, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { EXECUTOR_NAMES } from "../adapters/filesystem-executors.js";
import { runNodeScript } from "../examples/run-node-script.js";

const SCRIPT = resolve(import.meta.dirname, "../adapters/fixtures/durable-executor-run.ts");

interface RunOutput {
  cards: { id: string; path: string }[];
  writes: string[];
  replies: Record<string, string>;
}

/** Runs one phase in its own Node process (a new process per phase: nothing survives in memory). */
async function runPhase(args: string[]): Promise<RunOutput> {
  const { code, stdout, stderr } = await runNodeScript([SCRIPT, ...args]);
  if (code !== 0) throw new Error(`phase ${args[1]} exited ${code}: ${stderr.slice(-2000)}`);
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as RunOutput;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe.each(EXECUTOR_NAMES)("durable resume in a new process with a SQLite checkpointer: %s", (name) => {
  test("cards raised in one process are answered in another; each allowed write runs once", async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), "sciencegate-durable-fs-")));
    const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-durable-data-"));
    const checkpoints = join(dataDir, "checkpoints.sqlite");
    const common = [root, dataDir, checkpoints];

    const started = await runPhase([name, "start", ...common]);
    expect(started.cards).toHaveLength(3);
    expect(started.writes).toEqual([]);
    for (const file of ["a.txt", "b.txt", "c.txt"]) expect(await exists(join(root, file))).toBe(false);

    const answer = (file: string) => started.cards.find((card) => card.path.endsWith(`/${file}`))?.id ?? "";
    const resume = {
      [answer("a.txt")]: { decision: "allow_once" },
      [answer("b.txt")]: { decision: "deny", message: "not b" },
      [answer("c.txt")]: { decision: "allow_once" },
    };
    const resumed = await runPhase([name, "resume", ...common, JSON.stringify(resume)]);
    expect(resumed.cards).toEqual([]);
    expect(resumed.writes.sort()).toEqual(["write-1", "write-3"]);
    expect(resumed.replies).toMatchObject({ "write-1": "success", "write-2": "error", "write-3": "success" });
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("content of a.txt");
    expect(await exists(join(root, "b.txt"))).toBe(false);

    // A third process resuming again runs nothing twice.
    const again = await runPhase([name, "resume", ...common, "{}"]);
    expect(again.writes.sort()).toEqual(["write-1", "write-3"]);
  }, 240_000);
});
