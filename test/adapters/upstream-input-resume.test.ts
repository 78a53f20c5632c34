import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { repoRoot } from "../mcp/server-configs.js";
import { effectsFile } from "../mcp/upstream-fixture.js";
import { toolName } from "./upstream-input-executors.js";

const run = promisify(execFile);
const SCRIPT = resolve(import.meta.dirname, "fixtures/upstream-input-run.ts");

interface Output {
  cards: { id: string; type: string; value: Record<string, unknown> }[];
  reply: { status: string; content: string } | null;
  rows: { toolId: string; toolCallId?: string; status: string }[];
  authorizations: string[];
}

/** Runs one phase in a fresh Node process (the previous one has exited). */
async function phase(args: string[]): Promise<Output> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", SCRIPT, ...args], {
    cwd: repoRoot,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Output;
}

describe("an upstream question answered in a new process", () => {
  test.each([
    ["StateGraph node set", "2025-11-25"],
    ["createAgent + governanceMiddleware", "2026-07-28"],
  ] as const)(
    "%s on %s: three processes, one effect, one row",
    async (executor, protocol) => {
      const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-resume-"));
      const checkpoints = join(dataDir, "checkpoints.sqlite");
      const effects = effectsFile();
      const common = [executor, protocol];
      const paths = [dataDir, checkpoints, effects.path];

      const first = await phase([...common, "start", ...paths]);
      expect(first.cards.map((card) => card.type)).toEqual(["permission"]);
      const approval = first.cards[0]?.id ?? "";

      const second = await phase([
        ...common,
        "resume",
        ...paths,
        JSON.stringify({ [approval]: { decisions: [{ type: "approve" }] } }),
      ]);
      expect(second.cards.map((card) => [card.type, card.value.message])).toEqual([
        ["upstream_input", "Really delete x?"],
      ]);
      expect(second.rows.filter((row) => row.toolId === "confirm_action")).toEqual([]);

      const answer = {
        decisions: [
          { type: "edit", editedAction: { name: toolName("confirm_action"), args: { confirm: true } } },
        ],
      };
      const third = await phase([
        ...common,
        "resume",
        ...paths,
        JSON.stringify({ [second.cards[0]?.id ?? ""]: answer }),
      ]);
      expect(third.cards).toEqual([]);
      expect(third.reply).toMatchObject({
        status: "success",
        content: expect.stringContaining("done: delete x"),
      });
      expect(third.rows.filter((row) => row.toolId === "confirm_action")).toEqual([
        { toolId: "confirm_action", toolCallId: "call-1", status: "ok" },
      ]);
      // The approval was given once and recorded once, though the process that resumed never saw it.
      expect(third.authorizations).toEqual(["user_once", "upstream_asked", "user_answered"]);
      expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([
        "effect confirm_action delete x",
      ]);
      // Three processes of the server: one per phase, each started by its own pool.
      expect(effects.lines().filter((line) => line.startsWith("start")).length).toBe(3);
      // Three Node processes, each loading langchain, LangGraph and the SDK through tsx.
    },
    360_000,
  );
});
