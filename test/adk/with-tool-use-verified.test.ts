import { Annotation, MemorySaver, StateGraph } from "@langchain/langgraph";
import { expect, test } from "vitest";
import { withToolUseVerified } from "../../src/adk/with-tool-use-verified.js";
import type { InvocationRecord } from "../../src/governance/audit/ledger.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";

function row(id: string, runId: string, status: "ok" | "error"): InvocationRecord {
  return {
    invocationId: id,
    sessionId: "s",
    runId,
    sourceId: "local",
    toolId: "power_law_fit",
    mcpToolName: "power_law_fit",
    status,
    startedAt: "2025-01-01T00:00:00.000Z",
    finishedAt: "2025-01-01T00:00:00.001Z",
    durationMs: 1,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...(status === "error"
      ? { error: { code: "TOOL_FAILED", message: "ValueError: x", retryable: false, attempts: 1 } }
      : {}),
  };
}

const State = Annotation.Root({ done: Annotation<boolean> });

async function runGraph(ledger: MemoryLedger, runId: string): Promise<unknown> {
  const analyze = withToolUseVerified(() => ({ done: true }), {
    declaration: { id: "analyze", kind: "algorithm", tools: ["local.power_law_fit"] },
    ledger,
  });
  const graph = new StateGraph(State).addNode("analyze", analyze).addEdge("__start__", "analyze").compile({
    checkpointer: new MemorySaver(),
  });
  return graph.invoke({ done: false }, { configurable: { thread_id: "t", run_id: runId } });
}

test("a LangGraph node that declared tools passes after a successful call and fails, naming node and tools, without one", async () => {
  const ledger = new MemoryLedger();
  await ledger.append(row("a", "good", "ok"));
  await ledger.append(row("b", "bad", "error"));
  await expect(runGraph(ledger, "good")).resolves.toEqual({ done: true });
  await expect(runGraph(ledger, "bad")).rejects.toThrow(
    /tool_use_verified failed: node 'analyze' declared tools \[local\.power_law_fit\]/,
  );
});
