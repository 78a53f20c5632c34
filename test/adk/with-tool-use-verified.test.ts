import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotation,
  END,
  type LangGraphRunnableConfig,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createScienceGovernance as createGovernance,
  type ScienceGovernance as Governance,
} from "../../src/adk/index.js";
import { toolUseVerified } from "../../src/adk/tool-use-verified.js";
import { withToolUseVerified } from "../../src/adk/with-tool-use-verified.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const State = Annotation.Root({ rounds: Annotation<number> });
type S = typeof State.State;

let governance: Governance;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-gate-"));
  writeFileSync(
    join(dir, "science.toml"),
    `[tools.extra]\npath = ${JSON.stringify(join(FIXTURES, "extra-tools"))}\n`,
  );
  governance = await createGovernance({
    cwd: dir,
    env: { PATH: process.env.PATH },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
  });
}, 60_000);
afterAll(() => governance?.close());

const declaration = (id: string) => ({ id, kind: "algorithm", tools: ["extra.scale"] });
/** A node that calls the declared tool in the graph's run (the node itself is not named). */
const calling = async (state: S, config: LangGraphRunnableConfig) => {
  await governance.callTool("scale", { value: state.rounds }, { runId: config.configurable?.run_id });
  return { rounds: state.rounds + 1 };
};
const idle = (state: S) => ({ rounds: state.rounds + 1 });

describe("withToolUseVerified judges each node by its own calls", () => {
  test("two nodes in one run, only the first calls the declared tool: the second fails", async () => {
    const graph = new StateGraph(State)
      .addNode("analyze", withToolUseVerified(calling, { declaration: declaration("analyze"), governance }))
      .addNode(
        "cross_check",
        withToolUseVerified(idle, { declaration: declaration("cross_check"), governance }),
      )
      .addEdge(START, "analyze")
      .addEdge("analyze", "cross_check")
      .addEdge("cross_check", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t-two", run_id: "run-two" } };
    await expect(graph.invoke({ rounds: 1 }, config)).rejects.toMatchObject({
      code: "TOOL_UNAVAILABLE",
      message: expect.stringMatching(
        /^tool_use_verified failed: node 'cross_check' declared tools \[extra\.scale\] but completed without a successful call of them/,
      ),
      data: { gate: "tool_use_verified", nodeId: "cross_check", runId: "run-two" },
    });
    // The ledger says which node made the call; the after-the-fact check agrees with the wrapper.
    expect(await governance.ledger.query({ runId: "run-two#analyze" })).toMatchObject([
      { sourceId: "extra", toolId: "scale", status: "ok" },
    ]);
    const verdict = await toolUseVerified({
      governance,
      runId: "run-two",
      declarations: [declaration("analyze"), declaration("cross_check")],
    });
    expect(verdict.failures.map((f) => f.nodeId)).toEqual(["cross_check"]);
  });

  test("each invocation of a node counts alone: a second round without a call fails", async () => {
    const once = async (state: S, config: LangGraphRunnableConfig) =>
      state.rounds === 1 ? calling(state, config) : idle(state);
    const graph = new StateGraph(State)
      .addNode("analyze", withToolUseVerified(once, { declaration: declaration("analyze"), governance }))
      .addEdge(START, "analyze")
      .addConditionalEdges("analyze", (state: S) => (state.rounds < 3 ? "analyze" : END), ["analyze", END])
      .compile({ checkpointer: new MemorySaver() });
    await expect(
      graph.invoke({ rounds: 1 }, { configurable: { thread_id: "t-loop", run_id: "run-loop" } }),
    ).rejects.toThrow(/node 'analyze' declared tools \[extra\.scale\]/);
  });

  test("a node that calls its tool passes; without a run id the node is refused before it runs", async () => {
    let ran = 0;
    const counted = async (state: S, config: LangGraphRunnableConfig) => {
      ran += 1;
      return calling(state, config);
    };
    const node = withToolUseVerified(counted, { declaration: declaration("analyze"), governance });
    const graph = new StateGraph(State)
      .addNode("analyze", node)
      .addEdge(START, "analyze")
      .compile({ checkpointer: new MemorySaver() });
    await expect(
      graph.invoke({ rounds: 1 }, { configurable: { thread_id: "t-ok", run_id: "run-ok" } }),
    ).resolves.toEqual({ rounds: 2 });
    await expect(node({ rounds: 1 }, {})).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(ran).toBe(1);
  });
});

// Some LangGraph clients send numeric thread ids; an empty one means "not given" (idOf, threadIdOf).
test.each([
  { configurable: { thread_id: 42 }, runId: "42" },
  { configurable: { thread_id: "42" }, runId: "42" },
  { configurable: { run_id: "", thread_id: 43 }, runId: "43" },
  { configurable: { run_id: 44 }, runId: "44" },
  { configurable: { thread_id: "" }, runId: undefined },
  { configurable: { run_id: " ", thread_id: "" }, runId: undefined },
  { configurable: {}, runId: undefined },
])("without a runId option, configurable $configurable is run $runId", async ({ configurable, runId }) => {
  const unscoped = async (state: S) => {
    await governance.callTool("scale", { value: state.rounds });
    return { rounds: state.rounds + 1 };
  };
  const node = withToolUseVerified(unscoped, { declaration: declaration("analyze"), governance });
  // No checkpointer: LangGraph's savers refuse a run without a thread.
  const graph = new StateGraph(State).addNode("analyze", node).addEdge(START, "analyze").compile();
  const run = graph.invoke({ rounds: 1 }, { configurable });
  if (runId === undefined) {
    await expect(run).rejects.toMatchObject({ code: "INVALID_INPUT" });
    return;
  }
  await expect(run).resolves.toEqual({ rounds: 2 });
  expect(await governance.ledger.query({ runId: `${runId}#analyze`, status: "ok" })).not.toHaveLength(0);
});
