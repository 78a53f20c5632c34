import type { ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import type { Governance } from "../../src/runtime/create-governance.js";
import { effectsFile } from "../mcp/upstream-fixture.js";
import { buildExecutor } from "./filesystem-executors.js";
import { oneCallModel, onlyCard, toolName, upstreamGovernance } from "./upstream-input-executors.js";

const EXECUTORS = ["StateGraph node set", "createAgent + governanceMiddleware"] as const;
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

const approve = (id: string) => new Command({ resume: { [id]: { decisions: [{ type: "approve" }] } } });
const toolMessage = (state: { messages: unknown[] }, id = "call-1") =>
  state.messages.find((m) => (m as ToolMessage).tool_call_id === id) as ToolMessage | undefined;

describe.each(EXECUTORS)("an upstream question is an interrupt card in %s", (executorName) => {
  test.each(REVISIONS)(
    "on %s: approve the call, answer the question, the call runs once",
    async (protocol) => {
      const effects = effectsFile();
      governance = await upstreamGovernance({ protocol, effects: effects.path });
      const executor = buildExecutor(
        executorName,
        governance,
        oneCallModel("confirm_action", { action: "delete x" }),
        new MemorySaver(),
      );
      const approval = onlyCard(await executor.invoke("start", "t1"), "permission");

      const asked = onlyCard(await executor.invoke(approve(approval.id), "t1"), "upstream_input");
      expect(asked.value).toMatchObject({
        type: "upstream_input",
        serverId: "up",
        sourceId: "up",
        toolId: "confirm_action",
        toolCallId: "call-1",
        index: 1,
        mode: "form",
        message: "Really delete x?",
      });
      // The same channel and shape as an approval card: langchain's HITL request of the call.
      expect(asked.hitl).toMatchObject({
        actionRequests: [{ name: toolName("confirm_action"), args: { confirm: false } }],
        reviewConfigs: [
          { actionName: toolName("confirm_action"), allowedDecisions: ["approve", "edit", "reject"] },
        ],
      });
      expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([]);

      const answer = {
        decisions: [
          { type: "edit", editedAction: { name: toolName("confirm_action"), args: { confirm: true } } },
        ],
      };
      const done = await executor.invoke(new Command({ resume: { [asked.id]: answer } }), "t1");
      expect(toolMessage(done)?.status ?? "success").toBe("success");
      expect(String(toolMessage(done)?.content)).toContain("done: delete x");
      expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([
        "effect confirm_action delete x",
      ]);
      // 2025-11-25: the attempt that asked was cancelled, and the call ran again (the SDK's shim enters the
      // handler once more with the answer). 2026-07-28: the first round, then its retry with the answer.
      const attempts = effects.lines().filter((line) => line === "attempt confirm_action").length;
      expect(attempts).toBe(protocol === "2025-11-25" ? 3 : 2);

      const rows = await governance.ledger.query({ threadId: "t1", toolId: "confirm_action" });
      expect(rows.map((row) => [row.toolCallId, row.status])).toEqual([["call-1", "ok"]]);
      const authorizations = await governance.ledger.listAuthorizations({ sessionId: "t1" });
      expect(
        authorizations.filter((row) => row.toolCallId === "call-1").map((row) => row.decisionSource),
      ).toEqual(["user_once", "upstream_asked", "user_answered"]);
      // The continued call ran on the approval's authorization.
      expect(rows[0]?.authorizationId).toBe(
        authorizations.find((row) => row.decisionSource === "user_once")?.id,
      );
    },
  );

  test("a rejected question reaches the server as a decline; nothing is done", async () => {
    const effects = effectsFile();
    governance = await upstreamGovernance({ protocol: "2026-07-28", effects: effects.path });
    const executor = buildExecutor(
      executorName,
      governance,
      oneCallModel("confirm_action", { action: "format disk" }),
      new MemorySaver(),
    );
    const approval = onlyCard(await executor.invoke("start", "t2"), "permission");
    const asked = onlyCard(await executor.invoke(approve(approval.id), "t2"), "upstream_input");
    const done = await executor.invoke(
      new Command({ resume: { [asked.id]: { decisions: [{ type: "reject" }] } } }),
      "t2",
    );
    const message = toolMessage(done);
    expect(message?.status).toBe("error");
    expect(JSON.parse(String(message?.content))).toMatchObject({ code: "TOOL_FAILED" });
    expect(String(message?.content)).toContain("not confirmed (decline)");
    expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([]);
    expect((await governance.ledger.query({ threadId: "t2", toolId: "confirm_action" })).length).toBe(1);
  });

  test("a malformed answer asks again; two questions in one call are two cards", async () => {
    const effects = effectsFile();
    governance = await upstreamGovernance({ protocol: "2025-11-25", effects: effects.path });
    const executor = buildExecutor(
      executorName,
      governance,
      oneCallModel("two_questions", {}),
      new MemorySaver(),
    );
    const approval = onlyCard(await executor.invoke("start", "t3"), "permission");
    const first = onlyCard(await executor.invoke(approve(approval.id), "t3"), "upstream_input");
    expect(first.value).toMatchObject({ index: 1, message: "Your name?" });
    const again = onlyCard(
      await executor.invoke(
        new Command({ resume: { [first.id]: { action: "accept", content: { name: 7 } } } }),
        "t3",
      ),
      "upstream_input",
    );
    expect(again.value).toMatchObject({ index: 1, invalidResponse: expect.stringContaining("content") });
    const second = onlyCard(
      await executor.invoke(
        new Command({ resume: { [again.id]: { action: "accept", content: { name: "Ada" } } } }),
        "t3",
      ),
      "upstream_input",
    );
    expect(second.value).toMatchObject({ index: 2, message: "Ada, your favourite colour?" });
    const done = await executor.invoke(
      new Command({ resume: { [second.id]: { action: "accept", content: { colour: "red" } } } }),
      "t3",
    );
    expect(String(toolMessage(done)?.content)).toContain("Ada likes red");
    expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([
      "effect two_questions Ada red",
    ]);
    expect(
      (await governance.ledger.query({ threadId: "t3", toolId: "two_questions" })).map((r) => r.status),
    ).toEqual(["ok"]);
  });
});
