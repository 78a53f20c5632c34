import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import type { HITLRequest, HITLResponse } from "langchain";
import { describe, expect, test } from "vitest";
import type { PermissionCard } from "../../src/governance/permissions/index.js";
import type { ApprovalHitlRequest } from "../../src/nodes/index.js";
import {
  buildExecutor,
  cardForFile,
  cardsOf,
  EXECUTOR_NAMES,
  type ExecutorOptions,
  interruptsOf,
  toolMessagesById,
  WRITE_FILE,
  writerModel,
} from "./filesystem-executors.js";
import { exists, FILES, filesystemRuntimes } from "./filesystem-test-runtime.js";

const openRuntime = filesystemRuntimes();

async function setup(name: (typeof EXECUTOR_NAMES)[number], checkpointer?: false, options?: ExecutorOptions) {
  const { governance, root } = await openRuntime();
  const agent = buildExecutor(name, governance, writerModel(root, FILES), checkpointer, options);
  const writes = async () =>
    (await governance.ledger.query()).filter((row) => row.toolId === "write_file" && row.status === "ok");
  return { governance, root, agent, writes };
}

describe.each(EXECUTOR_NAMES)("approval cards by default: %s", (name) => {
  test("three parallel writes give three cards before any file exists; allow, deny and allow run each allowed write once", async () => {
    const { root, agent, writes } = await setup(name);
    const paused = await agent.invoke("start", "t1");
    const cards = cardsOf(paused);
    expect(cards).toHaveLength(3);
    expect(new Set(cards.map((c) => c.id)).size).toBe(3);
    expect(cards.map((c) => c.value?.toolId)).toEqual(["write_file", "write_file", "write_file"]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(false);

    const resume = new Command({
      resume: {
        [cardForFile(paused, "a.txt")]: { decision: "allow_once" },
        [cardForFile(paused, "b.txt")]: { decision: "deny", message: "not b" },
        [cardForFile(paused, "c.txt")]: { decision: "allow_once" },
      },
    });
    const done = await agent.invoke(resume, "t1");
    expect(cardsOf(done)).toEqual([]);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("content of a.txt");
    expect(await exists(join(root, "b.txt"))).toBe(false);
    expect(await readFile(join(root, "c.txt"), "utf8")).toBe("content of c.txt");
    const replies = toolMessagesById(done);
    expect(replies.get("write-2")?.status).toBe("error");
    expect(JSON.parse(String(replies.get("write-2")?.content))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("not b"),
    });
    expect(replies.get("write-1")?.status).not.toBe("error");
    expect((await writes()).map((row) => row.toolCallId).sort()).toEqual(["write-1", "write-3"]);

    // A stray resume after the end runs nothing again.
    await agent.invoke(new Command({ resume: {} }), "t1");
    expect(await writes()).toHaveLength(2);
  });

  test("allow_matching on one card releases its covered siblings on the same resume", async () => {
    const { root, agent, writes } = await setup(name);
    const paused = await agent.invoke("start", "t2");
    expect(cardsOf(paused)).toHaveLength(3);
    const done = await agent.invoke(
      new Command({ resume: { [cardForFile(paused, "a.txt")]: { decision: "allow_matching" } } }),
      "t2",
    );
    expect(cardsOf(done)).toEqual([]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(true);
    expect(await writes()).toHaveLength(3);
    expect(toolMessagesById(done).size).toBeGreaterThanOrEqual(4);
    expect(
      [...toolMessagesById(done).values()].filter((m) => m.name === WRITE_FILE && m.status === "error"),
    ).toEqual([]);
  });

  test("cards are langchain HITLRequests by default; HITLResponse edit, reject and approve each do what they say, once", async () => {
    const { root, agent, writes } = await setup(name);
    const paused = await agent.invoke("start", "t4");
    const raised = interruptsOf(paused);
    expect(raised).toHaveLength(3);
    for (const { value } of raised) {
      const request: HITLRequest = value as ApprovalHitlRequest;
      expect(request.actionRequests).toEqual([
        {
          name: WRITE_FILE,
          args: { path: expect.any(String), content: expect.any(String) },
          description: expect.stringContaining("write_file on filesystem"),
        },
      ]);
      expect(request.reviewConfigs).toEqual([
        {
          actionName: WRITE_FILE,
          allowedDecisions: ["approve", "edit", "reject"],
          argsSchema: expect.any(Object),
        },
      ]);
    }
    const edit: HITLResponse = {
      decisions: [
        {
          type: "edit",
          editedAction: {
            name: WRITE_FILE,
            args: { path: join(root, "edited.txt"), content: "written by the human's edit" },
          },
        },
      ],
    };
    const reject: HITLResponse = { decisions: [{ type: "reject", message: "no b" }] };
    const approve: HITLResponse = { decisions: [{ type: "approve" }] };
    const done = await agent.invoke(
      new Command({
        resume: {
          [cardForFile(paused, "a.txt")]: edit,
          [cardForFile(paused, "b.txt")]: reject,
          [cardForFile(paused, "c.txt")]: approve,
        },
      }),
      "t4",
    );
    expect(cardsOf(done)).toEqual([]);
    expect(await readFile(join(root, "edited.txt"), "utf8")).toBe("written by the human's edit");
    expect(await exists(join(root, "a.txt"))).toBe(false);
    expect(await exists(join(root, "b.txt"))).toBe(false);
    expect(await readFile(join(root, "c.txt"), "utf8")).toBe("content of c.txt");
    expect(JSON.parse(String(toolMessagesById(done).get("write-2")?.content))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("no b"),
    });
    expect((await writes()).map((row) => row.toolCallId).sort()).toEqual(["write-1", "write-3"]);
    await agent.invoke(new Command({ resume: {} }), "t4");
    expect(await writes()).toHaveLength(2);
  });

  test('cardFormat: "native" raises the PermissionCard itself; native answers resume it', async () => {
    const { root, agent, writes } = await setup(name, undefined, { cardFormat: "native" });
    const paused = await agent.invoke("start", "t5");
    const raised = interruptsOf(paused).map(({ value }) => value as PermissionCard);
    expect(raised.map((card) => [card.type, card.toolId])).toEqual([
      ["permission", "write_file"],
      ["permission", "write_file"],
      ["permission", "write_file"],
    ]);
    const done = await agent.invoke(
      new Command({
        resume: Object.fromEntries(
          FILES.map((file) => [
            cardForFile(paused, file),
            { decision: file === "b.txt" ? "deny" : "allow_once" },
          ]),
        ),
      }),
      "t5",
    );
    expect(cardsOf(done)).toEqual([]);
    expect(await exists(join(root, "b.txt"))).toBe(false);
    expect((await writes()).map((row) => row.toolCallId).sort()).toEqual(["write-1", "write-3"]);
  });

  test("without a checkpointer nothing is written and each refusal names the fix and is audited", async () => {
    const { root, agent, governance } = await setup(name, false);
    const done = await agent.invoke("start", "t3");
    expect(cardsOf(done)).toEqual([]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(false);
    const writes = [...toolMessagesById(done).values()].filter((m) => m.name === WRITE_FILE);
    expect(writes).toHaveLength(3);
    for (const message of writes) {
      expect(message.status).toBe("error");
      const body = JSON.parse(String(message.content));
      expect(body.code).toBe("PERMISSION_DENIED");
      expect(body.message).toContain("checkpointer");
      expect(body.message).toContain("always_allow");
      expect(body.message).not.toContain("PermissionService");
    }
    const rows = (await governance.ledger.query()).filter((row) => row.toolId === "write_file");
    expect(rows.map((row) => [row.status, row.error?.code, row.toolCallId]).sort()).toEqual([
      ["error", "PERMISSION_DENIED", "write-1"],
      ["error", "PERMISSION_DENIED", "write-2"],
      ["error", "PERMISSION_DENIED", "write-3"],
    ]);
  });
});
