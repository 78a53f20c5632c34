/**
 * An upstream server's question asked on one replica and answered on another: two runtimes on one
 * PostgreSQL database, each with its own data directory (as replicas on separate hosts run), one
 * checkpointer. The question's record travels with its row in the shared ledger, so the replica that
 * resumes the thread continues the call: once, one row.
 */
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Governance } from "../../src/runtime/create-governance.js";
import { effectsFile } from "../mcp/upstream-fixture.js";
import { schemaUrls } from "../postgres/fresh-schema.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import { buildExecutor } from "./filesystem-executors.js";
import { RecordingModel } from "./recording-model.js";
import { oneCallModel, onlyCard, upstreamGovernance } from "./upstream-input-executors.js";

let server: TestPostgres;
let schemas: { next(): Promise<string> };
const opened: Governance[] = [];
beforeAll(async () => {
  server = await openTestPostgres();
  schemas = schemaUrls(await server.createDatabase());
});
afterAll(async () => {
  for (const governance of opened) await governance.close();
  await server?.stop();
});

describe.each(["2025-11-25", "2026-07-28"] as const)("on %s", (protocol) => {
  test("a question asked on replica A is answered on replica B: the call continues there once, one row", async () => {
    const postgres = await schemas.next();
    const effects = effectsFile();
    const a = await upstreamGovernance({ protocol, effects: effects.path, postgres });
    const b = await upstreamGovernance({ protocol, effects: effects.path, postgres });
    opened.push(a, b);
    const checkpoints = new MemorySaver();
    const onA = buildExecutor(
      "StateGraph node set",
      a,
      oneCallModel("confirm_action", { action: "delete x" }),
      checkpoints,
    );
    const approval = onlyCard(await onA.invoke("start", "r1"), "permission");
    const asked = onlyCard(
      await onA.invoke(
        new Command({ resume: { [approval.id]: { decisions: [{ type: "approve" }] } } }),
        "r1",
      ),
      "upstream_input",
    );
    expect(asked.value).toMatchObject({ index: 1, message: "Really delete x?" });
    expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([]);

    // B has its own data directory: it knows the question only from the shared ledger.
    const onB = buildExecutor(
      "StateGraph node set",
      b,
      new RecordingModel().respond(new AIMessage({ id: "m-3", content: "done" })),
      checkpoints,
    );
    const done = await onB.invoke(
      new Command({ resume: { [asked.id]: { action: "accept", content: { confirm: true } } } }),
      "r1",
    );
    const reply = done.messages.find((m) => (m as ToolMessage).tool_call_id === "call-1") as ToolMessage;
    expect(reply.status ?? "success").toBe("success");
    expect(String(reply.content)).toContain("done: delete x");
    expect(effects.lines().filter((line) => line.startsWith("effect"))).toEqual([
      "effect confirm_action delete x",
    ]);
    const rows = await b.ledger.query({ threadId: "r1", toolId: "confirm_action" });
    expect(rows.map((row) => [row.toolCallId, row.status])).toEqual([["call-1", "ok"]]);
    const decisions = (await a.ledger.listAuthorizations({ sessionId: "r1" }))
      .filter((row) => row.toolCallId === "call-1")
      .map((row) => row.decisionSource);
    expect(decisions).toEqual(["user_once", "upstream_asked", "user_answered"]);
  }, 60_000);
});
