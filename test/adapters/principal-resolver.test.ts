/**
 * A LangGraph app's `principal` resolver: each call's rows carry the user the resolver reads from the
 * call's config; without a resolver nothing in a config is taken as a user; an answer that is not a
 * principal is refused before anything runs.
 */
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, expect, test } from "vitest";
import { prepareFixedToolTable } from "../../src/adapters/fixed-tool-table.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createDemoGovernance, type DemoCounters } from "../nodes/governed-test-runtime.js";

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

async function setup(): Promise<{ governance: Governance; counters: DemoCounters }> {
  const built = await createDemoGovernance();
  governance = built.governance;
  return built;
}

const call = async (
  tools: ReturnType<typeof prepareFixedToolTable>,
  id: string,
  configurable: Record<string, unknown>,
) =>
  (await tools
    .find((tool) => tool.name === "mcp__demo__search")
    ?.invoke(
      { type: "tool_call", id, name: "mcp__demo__search", args: { query: "brca1" } },
      { configurable },
    )) as ToolMessage | undefined;

test("rows carry the principal the resolver reads; one thread, two users", async () => {
  const { governance: g } = await setup();
  const tools = prepareFixedToolTable({
    governance: g,
    principal: (config) => config.configurable?.langgraph_auth_user_id as string | undefined,
  });
  await call(tools, "c1", { thread_id: "t1", langgraph_auth_user_id: "alice" });
  await call(tools, "c2", { thread_id: "t1", langgraph_auth_user_id: "bob" });
  await call(tools, "c3", { thread_id: "t1" });
  const rows = await g.ledger.query({ order: "asc" });
  expect(rows.map((row) => [row.toolCallId, row.principal])).toEqual([
    ["c1", "alice"],
    ["c2", "bob"],
    ["c3", undefined],
  ]);
  expect((await g.ledger.query({ principal: "alice" })).map((row) => row.toolCallId)).toEqual(["c1"]);
});

test("without a resolver a config's user id is not taken as a principal", async () => {
  const { governance: g } = await setup();
  const tools = prepareFixedToolTable({ governance: g });
  await call(tools, "c1", { thread_id: "t1", langgraph_auth_user_id: "mallory" });
  const [row] = await g.ledger.query();
  expect(row?.principal).toBeUndefined();
});

test("a resolver answer that is not a principal (a control character) is refused and nothing runs", async () => {
  const { governance: g, counters } = await setup();
  const tools = prepareFixedToolTable({ governance: g, principal: () => "alice\u0000admin" });
  await expect(call(tools, "c1", { thread_id: "t1" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  expect(counters.calls.search).toBeUndefined();
});
