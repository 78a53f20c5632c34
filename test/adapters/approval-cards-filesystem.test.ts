import { access, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import type { Governance } from "../../src/runtime/create-governance.js";
import {
  buildExecutor,
  cardForFile,
  cardsOf,
  filesystemGovernance,
  writerModel,
} from "./filesystem-executors.js";

const opened: Governance[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((g) => g.close()));
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("approval cards of a server without a manifest (real server-filesystem)", () => {
  test("three writes give three cards naming their paths; allow_matching covers one directory only", async () => {
    const { governance, root } = await filesystemGovernance();
    opened.push(governance);
    await mkdir(join(root, "other"));
    const files = ["a.txt", "b.txt", "other/c.txt"];
    const agent = buildExecutor("createGovernedAgent", governance, writerModel(root, files));

    const paused = await agent.invoke("start", "t1");
    const cards = cardsOf(paused).map((c) => c.value);
    expect(cards.map((c) => c?.summary).sort()).toEqual(
      files.map(
        (f) =>
          `write_file on filesystem: path "${join(root, f)}", content ${`content of ${f}`.length} characters`,
      ),
    );
    const cardA = cards.find((c) => c?.args.path === join(root, "a.txt"));
    expect(cardA?.matchingScope).toEqual({
      resource: `filesystem:write_file:dir:${root}`,
      description: `every filesystem:write_file call with path in ${root} (not in its subfolders), for the rest of this session`,
    });
    expect(cardA?.allowedDecisions).toEqual(["allow_once", "allow_matching", "allow_always", "deny"]);

    const afterGrant = await agent.invoke(
      new Command({ resume: { [cardForFile(paused, "a.txt")]: { decision: "allow_matching" } } }),
      "t1",
    );
    // The sibling in the same directory ran without a card; the write to another directory still asks.
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("content of a.txt");
    expect(await readFile(join(root, "b.txt"), "utf8")).toBe("content of b.txt");
    expect(await exists(join(root, "other", "c.txt"))).toBe(false);
    expect(cardsOf(afterGrant).map((c) => c.value?.args.path)).toEqual([join(root, "other", "c.txt")]);

    const done = await agent.invoke(
      new Command({ resume: { [cardForFile(afterGrant, "c.txt")]: { decision: "allow_once" } } }),
      "t1",
    );
    expect(cardsOf(done)).toEqual([]);
    expect(await readFile(join(root, "other", "c.txt"), "utf8")).toBe("content of other/c.txt");
    const sources = (await governance.ledger.listAuthorizations()).map((a) => [a.decisionSource, a.resource]);
    expect(sources.sort()).toEqual(
      [
        ["existing_grant", `filesystem:write_file:dir:${root}`],
        ["user_grant", `filesystem:write_file:dir:${root}`],
        ["user_once", `filesystem:write_file:dir:${join(root, "other")}`],
      ].sort(),
    );
  });

  test("allow_always on one card runs it and every other pending write, and records user_always", async () => {
    const { governance, root } = await filesystemGovernance();
    opened.push(governance);
    await mkdir(join(root, "other"));
    const files = ["a.txt", "other/c.txt"];
    const agent = buildExecutor("createGovernedAgent", governance, writerModel(root, files));
    const paused = await agent.invoke("start", "t2");
    expect(cardsOf(paused)).toHaveLength(2);
    const done = await agent.invoke(
      new Command({ resume: { [cardForFile(paused, "a.txt")]: { decision: "allow_always" } } }),
      "t2",
    );
    expect(cardsOf(done)).toEqual([]);
    for (const file of files) expect(await exists(join(root, file))).toBe(true);
    expect((await governance.ledger.listAuthorizations()).map((a) => a.decisionSource).sort()).toEqual([
      "always_allow",
      "user_always",
    ]);
  });
});
