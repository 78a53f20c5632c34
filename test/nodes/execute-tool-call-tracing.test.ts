import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, test } from "vitest";
import { recordSpans } from "../core/span-recorder.js";
import {
  cardFor,
  go,
  interruptsOf,
  type LabInput,
  labAgent,
  labRuntimes,
  resume,
  thread,
} from "./approval-harness.js";

const recorder = recordSpans();
const lab = labRuntimes();

/** Runs one graph step under an active span, as an app's LangGraph instrumentation would. */
async function underRunSpan<T>(name: string, step: () => Promise<T>): Promise<T> {
  return trace.getTracer("the-app").startActiveSpan(name, async (run) => {
    try {
      return await step();
    } finally {
      run.end();
    }
  });
}

const toolSpans = (name: string) => recorder.spans().filter((s) => s.name === `execute_tool ${name}`);
const approvalEvents = (span: ReadableSpan | undefined) =>
  span?.events.filter((e) => e.name === "sciencegate.approval").map((e) => e.attributes) ?? [];

describe("executor spans", () => {
  test("an approved call: the paused run records the card, the resumed run the decision, the broker span and the row", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [[{ tool: "write", query: "a", id: "call-a" }]]);
    const paused = await underRunSpan("run 1", () => agent.invoke(go, thread("t1")));
    const card = cardFor(paused, "a");

    const [first, ...moreFirst] = toolSpans("mcp__lab__write");
    expect(moreFirst).toEqual([]);
    expect(first?.kind).toBe(SpanKind.INTERNAL);
    expect(first?.parentSpanContext?.spanId).toBe(recorder.one("run 1").spanContext().spanId);
    expect(first?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "mcp__lab__write",
      "gen_ai.tool.call.id": "call-a",
      "gen_ai.tool.type": "extension",
      "gen_ai.conversation.id": "t1",
      "sciencegate.approval.outcome": "interrupted",
    });
    expect(first?.status.code).toBe(SpanStatusCode.UNSET);
    expect(approvalEvents(first)).toEqual([
      {
        "sciencegate.approval.outcome": "interrupted",
        "sciencegate.approval.card_id": card.value?.requestId,
        "sciencegate.approval.asked_at": new Date(rt.clock.now()).toISOString(),
      },
    ]);
    // Nothing ran: no broker span in the paused run.
    expect(recorder.spans().filter((s) => s.name.startsWith("sciencegate.invoke"))).toEqual([]);

    recorder.reset();
    await rt.clock.advance(90_000);
    const done = await underRunSpan("run 2", () =>
      agent.invoke(resume([[card, { decision: "allow_once" }]]), thread("t1")),
    );
    expect(interruptsOf(done)).toEqual([]);
    const [second] = toolSpans("mcp__lab__write");
    expect(second?.parentSpanContext?.spanId).toBe(recorder.one("run 2").spanContext().spanId);
    expect(second?.attributes["sciencegate.approval.outcome"]).toBe("passed");
    expect(approvalEvents(second)).toEqual([
      {
        "sciencegate.approval.outcome": "answered",
        "sciencegate.approval.decision": "allow_once",
        "sciencegate.approval.resumed": true,
        "sciencegate.approval.card_id": card.value?.requestId,
        // When the card was shown, 90 s before this run: the wait, across the interrupt.
        "sciencegate.approval.asked_at": new Date(rt.clock.now() - 90_000).toISOString(),
      },
    ]);
    const invocationId = second?.attributes["sciencegate.invocation_id"];
    const [row] = await rt.governance.ledger.query();
    expect(row).toMatchObject({ invocationId, toolCallId: "call-a", status: "ok" });
    const invoke = recorder.one("sciencegate.invoke lab/write");
    expect(invoke.parentSpanContext?.spanId).toBe(second?.spanContext().spanId);
    expect(invoke.attributes).toMatchObject({
      "sciencegate.invocation_id": invocationId,
      "sciencegate.authorization_id": row?.authorizationId,
    });
    expect(recorder.childrenOf(invoke).map((s) => s.name)).toEqual([
      "sciencegate.queue_wait",
      "tools/call write",
    ]);
  });

  test("a human's deny: the decision on the executor span, PERMISSION_DENIED as its error.type", async () => {
    const rt = await lab();
    const agent = labAgent(rt, [[{ tool: "write", query: "a" }]]);
    const paused = await agent.invoke(go, thread("t2"));
    recorder.reset();
    await agent.invoke(
      resume([[cardFor(paused, "a"), { decision: "deny", message: "not now" }]]) as LabInput,
      thread("t2"),
    );
    const [span] = toolSpans("mcp__lab__write");
    expect(approvalEvents(span)).toMatchObject([
      { "sciencegate.approval.outcome": "answered", "sciencegate.approval.decision": "deny" },
    ]);
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes["error.type"]).toBe("PERMISSION_DENIED");
    const [row] = await rt.governance.ledger.query();
    expect(row?.error?.code).toBe("PERMISSION_DENIED");
    expect(span?.attributes["sciencegate.invocation_id"]).toBe(row?.invocationId);
    expect(rt.calls).toEqual({});
  });

  test("a safe call has no approval event; tool_search is a function tool", async () => {
    const rt = await lab();
    await labAgent(rt, [[{ tool: "search", query: "d" }]]).invoke(go, thread("t3"));
    const [search] = toolSpans("mcp__lab__search");
    expect(approvalEvents(search)).toEqual([]);
    expect(search?.attributes["sciencegate.approval.outcome"]).toBe("passed");
    expect(search?.status.code).toBe(SpanStatusCode.UNSET);
    expect(toolSpans("tool_search")[0]?.attributes["gen_ai.tool.type"]).toBe("function");
  });
});
