import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import {
  autoPromote,
  emptyPromotionState,
  isPromoted,
  type PromotionState,
  type PromotionUpdate,
  promote,
  promotionReducer,
  runStartUpdate,
  staleTools,
} from "../../src/visibility/promotion.js";
import { builtinSurfaceTool } from "../../src/visibility/surface-tool.js";
import { surfaceTool } from "./surface-fixtures.js";

const tools = [
  surfaceTool("mcp__a__search", { routing: { keywords: ["protein"], mode: "prefer", priority: 50 } }),
  surfaceTool("mcp__b__search", {
    routing: { keywords: ["protein", "uniprot"], mode: "prefer", priority: 90 },
  }),
  surfaceTool("mcp__c__search", {
    routing: { keywords: ["off-target", "crispr"], mode: "prefer", priority: 70 },
  }),
  surfaceTool("mcp__d__lookup", { routing: { keywords: ["protein"], mode: "off", priority: 100 } }),
  surfaceTool("mcp__e__search", { routing: { keywords: ["gene expression"], mode: "prefer", priority: 50 } }),
  surfaceTool("mcp__f__search", { routing: { keywords: ["protein"], mode: "prefer", priority: 50 } }),
  surfaceTool("mcp__g__search", { routing: { keywords: ["c++", "target"], mode: "prefer", priority: 10 } }),
];

describe("promotionReducer", () => {
  test("merges updates and never mutates its inputs", () => {
    const left: PromotionState = { promoted: { x: "1" }, runId: "r1" };
    const next = promotionReducer(left, { promote: { y: "2" } });
    expect(next).toEqual({ promoted: { x: "1", y: "2" }, runId: "r1" });
    expect(left).toEqual({ promoted: { x: "1" }, runId: "r1" });
  });

  test("a later promotion of the same tool records the newer hash", () => {
    expect(promotionReducer({ promoted: { x: "old" } }, { promote: { x: "new" } }).promoted).toEqual({
      x: "new",
    });
  });

  test.each<[string, PromotionState | undefined, PromotionUpdate, PromotionState]>([
    ["first write", undefined, { promote: { x: "1" } }, { promoted: { x: "1" } }],
    [
      "reset starts the new run from nothing",
      { promoted: { x: "1" }, runId: "r1" },
      { reset: true, runId: "r2" },
      { promoted: {}, runId: "r2" },
    ],
    [
      "reset with promotions keeps only those",
      { promoted: { x: "1" } },
      { reset: true, runId: "r2", promote: { y: "2" } },
      { promoted: { y: "2" }, runId: "r2" },
    ],
    [
      "runId alone keeps promotions (thread scope)",
      { promoted: { x: "1" }, runId: "r1" },
      { runId: "r2" },
      { promoted: { x: "1" }, runId: "r2" },
    ],
  ])("%s", (_label, left, update, expected) => {
    expect(promotionReducer(left, update)).toEqual(expected);
  });
});

describe("runStartUpdate", () => {
  test.each<[string, PromotionState | undefined, "run" | "thread", PromotionUpdate | undefined]>([
    ["new thread", undefined, "run", { reset: true, runId: "r2" }],
    ["new run", { promoted: { x: "1" }, runId: "r1" }, "run", { reset: true, runId: "r2" }],
    ["resume of the same run keeps everything", { promoted: { x: "1" }, runId: "r2" }, "run", undefined],
    [
      "thread scope keeps promotions across runs",
      { promoted: { x: "1" }, runId: "r1" },
      "thread",
      { runId: "r2" },
    ],
  ])("%s", (_label, state, scope, expected) => {
    expect(runStartUpdate(state, "r2", scope)).toEqual(expected);
  });
});

describe("promote", () => {
  test("records current hashes, skipping unknown names and tools that are not deferred", () => {
    const builtin = builtinSurfaceTool({ name: "artifact_download", description: "d", inputSchema: {} });
    expect(promote(["mcp__a__search", "nope", "artifact_download"], [...tools, builtin])).toEqual({
      promote: { mcp__a__search: "hash-mcp__a__search" },
    });
  });
});

describe("autoPromote", () => {
  test.each([
    ["protein and UniProt ids", ["mcp__b__search", "mcp__a__search", "mcp__f__search"]],
    ["PROTEIN", ["mcp__b__search", "mcp__a__search", "mcp__f__search"]],
    ["proteins only (plural is another word)", []],
    ["proteinase", []],
    ["CRISPR off-target effects", ["mcp__c__search", "mcp__g__search"]],
    ["offtarget", []],
    ["differential gene   expression in mice", ["mcp__e__search"]],
    ["gene list expression", []],
    ["uses c++ code", ["mcp__g__search"]],
    ["", []],
  ])("%j -> %j", (text, expected) => {
    expect(autoPromote(text, tools)).toEqual(expected);
  });

  test("the limit caps the matches; `off` routing never auto-promotes", () => {
    expect(autoPromote("protein", tools, 1)).toEqual(["mcp__b__search"]);
    expect(autoPromote("protein", tools, 10)).not.toContain("mcp__d__lookup");
  });
});

describe("staleTools and isPromoted", () => {
  test("a tool whose definition hash changed since promotion is stale and no longer promoted", () => {
    const state = promotionReducer(undefined, promote(["mcp__a__search", "mcp__b__search"], tools));
    const changed = tools.map((t) => (t.name === "mcp__b__search" ? { ...t, definitionHash: "v2" } : t));
    expect(staleTools(state, changed)).toEqual([
      { name: "mcp__b__search", reason: expect.stringMatching(/changed/) },
    ]);
    expect(isPromoted(state, changed[0] as (typeof changed)[number])).toBe(true);
    expect(isPromoted(state, changed[1] as (typeof changed)[number])).toBe(false);
    expect(staleTools(state, tools)).toEqual([]);
    expect(staleTools(undefined, tools)).toEqual([]);
  });
});

describe("promotion channel in a LangGraph StateGraph", () => {
  const State = Annotation.Root({
    runKey: Annotation<string>,
    names: Annotation<string[]>,
    promotion: Annotation<PromotionState, PromotionUpdate>({
      reducer: promotionReducer,
      default: emptyPromotionState,
    }),
  });

  function graph() {
    const searchNode = (i: number) => (state: typeof State.State) => {
      const name = state.names[i];
      return name ? { promotion: promote([name], tools) } : {};
    };
    return new StateGraph(State)
      .addNode("begin", (state) => {
        const update = runStartUpdate(state.promotion, state.runKey);
        return update ? { promotion: update } : {};
      })
      .addNode("searchA", searchNode(0))
      .addNode("searchB", searchNode(1))
      .addNode("ask", () => {
        interrupt({ question: "continue?" });
        return {};
      })
      .addEdge(START, "begin")
      .addEdge("begin", "searchA")
      .addEdge("begin", "searchB")
      .addEdge(["searchA", "searchB"], "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });
  }

  test("two parallel searches both land, survive an interrupt and resume, and a new run starts empty", async () => {
    const app = graph();
    const config = { configurable: { thread_id: "t1" } };
    await app.invoke({ runKey: "r1", names: ["mcp__a__search", "mcp__b__search"] }, config);
    const paused = await app.getState(config);
    expect(paused.next).toEqual(["ask"]);
    expect(Object.keys(paused.values.promotion.promoted).sort()).toEqual([
      "mcp__a__search",
      "mcp__b__search",
    ]);

    const done = await app.invoke(new Command({ resume: "yes" }), config);
    expect(Object.keys(done.promotion.promoted).sort()).toEqual(["mcp__a__search", "mcp__b__search"]);

    await app.invoke({ runKey: "r2", names: ["mcp__c__search"] }, config);
    const second = await app.getState(config);
    expect(second.values.promotion).toEqual({
      promoted: { mcp__c__search: "hash-mcp__c__search" },
      runId: "r2",
    });
  });
});
