/**
 * `npx tsx examples/llm-wiki.ts`: the LLM Wiki bridge, offline. The reference wiki of `sciencegate/testing`
 * serves the pages in ./llm-wiki/pages on loopback, speaking the LLM Wiki HTTP interface; the default
 * configuration starts the bundled bridge (`sciencegate serve llm-wiki`) as a stdio child pointed at it
 * through `SCIENCE_AGENT_LLM_WIKI_URL`. The wiki is private: the source is off in every session until the
 * app switches it on, and each call asks a human first. A scripted agent searches the wiki; its card is
 * answered in code. Every outcome is asserted: the process exits non-zero when one is wrong.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, type Interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import {
  type ApprovalHitlRequest,
  createGovernance,
  createGovernedAgent,
  isGovernanceError,
  type McpToolResult,
} from "sciencegate";
import { hasCalled, lastToolResult, ScriptedChatModel, startReferenceWikiServer } from "sciencegate/testing";

const SEARCH = "mcp__llm-wiki__search";
const wiki = await startReferenceWikiServer({ pagesDir: join(import.meta.dirname, "llm-wiki", "pages") });
const governance = await createGovernance({
  // In production: the wiki's origin (no path) and, if it wants one, SCIENCE_AGENT_LLM_WIKI_TOKEN.
  env: { ...process.env, SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-llm-wiki-")) },
});

try {
  // Off by default in every session: a call is refused before anything reaches the wiki.
  const off = await governance.broker
    .invoke({
      sourceId: "llm-wiki",
      toolId: "search",
      input: { query: "base editing" },
      sessionId: "wiki-thread",
      toolCallId: "probe",
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  assert.ok(isGovernanceError(off) && off.code === "SOURCE_DISABLED", `disabled: ${String(off)}`);
  assert.equal(wiki.requests.length, 0);
  console.log(`before enableSource: ${off.code}`);

  await governance.sessions.enableSource("wiki-thread", "llm-wiki");
  const model = new ScriptedChatModel((messages) => {
    if (!hasCalled(messages, "tool_search"))
      return { toolCalls: [{ name: "tool_search", args: { query: `select:${SEARCH}` } }] };
    if (!hasCalled(messages, SEARCH))
      return { toolCalls: [{ name: SEARCH, args: { query: "base editing" } }] };
    const found = lastToolResult<McpToolResult>(messages, SEARCH)?.records[0];
    return { text: `Our wiki: ${found?.title} ${found?.primaryCitation.label}` };
  });
  const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "wiki-thread" } };
  let state = await agent.invoke(
    { messages: [new HumanMessage("What does our wiki say on base editing?")] },
    config,
  );
  const cards: string[] = [];
  while (isInterrupted(state)) {
    const resume: Record<string, { decision: "allow_once" }> = {};
    for (const card of state[INTERRUPT] as Interrupt<ApprovalHitlRequest>[]) {
      if (!card.id || !card.value) continue;
      cards.push(`${card.value.sciencegate.sourceId}/${card.value.sciencegate.toolId}`);
      console.log(`card: ${card.value.sciencegate.summary} -> allow_once`);
      resume[card.id] = { decision: "allow_once" };
    }
    state = await agent.invoke(new Command({ resume }), config);
  }
  assert.deepEqual(cards, ["llm-wiki/search"], "the private wiki asked first");

  // The bridge called the wiki's structured query (never its answer generation), once.
  assert.deepEqual(
    wiki.requests.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)}`),
    ['POST /api/v1/query/structured {"question":"base editing","top_k":5,"mode":"hybrid"}'],
  );
  const result = lastToolResult<McpToolResult>(state.messages, SEARCH);
  const page = result?.records.find((r) => r.title === "CRISPR base editing");
  assert.ok(page, "the page was found");
  assert.equal(page.primaryCitation.url, `${wiki.origin}/api/v1/wiki/concepts/crispr-base-editing`);
  console.log(`record: ${page.title} ${page.primaryCitation.url?.replace(wiki.origin, "<wiki>")}`);

  const rows = await governance.ledger.query({ sessionId: "wiki-thread" });
  const summary = rows.map(
    (r) => `${r.sourceId}/${r.toolId} ${r.status}${r.error ? ` ${r.error.code}` : ""}`,
  );
  assert.deepEqual(summary.sort(), ["llm-wiki/search error SOURCE_DISABLED", "llm-wiki/search ok"]);
  for (const line of summary) console.log(`ledger: ${line}`);
  console.log(`answer: ${state.messages.at(-1)?.text.replace(wiki.origin, "<wiki>")}`);
} finally {
  await governance.close();
  await wiki.close();
}
