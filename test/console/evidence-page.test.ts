/**
 * The Evidence page over a real runtime: the cited records come from real ChEMBL calls against the
 * loopback fake, one of them made by a real LangGraph run whose final answer the console reads from
 * the run's checkpointer (`checkpointerThreadAnswer`).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { checkpointerThreadAnswer } from "../../src/console/index.js";
import {
  type ConsoleRuntime,
  elementById,
  HOSTILE_TITLE_ESCAPED,
  hrefs,
  startConsoleRuntime,
} from "./console-runtime.js";

const IMATINIB_URL = "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941";
let runtime: ConsoleRuntime;
let csrf = "";
/** The imatinib search of session s-evidence, and the one the graph made in thread t-graph. */
const ids = { imatinib: "", hostile: "", graph: "" };

beforeAll(async () => {
  const checkpointer = new MemorySaver();
  runtime = await startConsoleRuntime({ threadAnswer: checkpointerThreadAnswer(checkpointer) });
  const { broker } = runtime.governance;
  ids.imatinib = (
    await broker.invoke({
      sourceId: "chembl",
      toolId: "search_molecules",
      input: { query: "imatinib" },
      sessionId: "s-evidence",
    })
  ).invocationId;
  ids.hostile = (
    await broker.invoke({
      sourceId: "chembl",
      toolId: "search_molecules",
      input: { query: "hostile", max_results: 100 },
      sessionId: "s-evidence",
    })
  ).invocationId;
  // A real graph: its node makes a governed call in its thread's session and answers with a citation.
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (_state, config) => {
      const thread = String(config.configurable?.thread_id);
      const { invocationId, result } = await broker.invoke({
        sourceId: "chembl",
        toolId: "search_molecules",
        input: { query: "imatinib" },
        sessionId: thread,
        threadId: thread,
        toolCallId: "call-1",
      });
      ids.graph = invocationId;
      const label = result.records[0]?.primaryCitation.label ?? "";
      return { messages: [new AIMessage(`Imatinib is a ChEMBL molecule ${label}.\nIt cures everything.`)] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer });
  await graph.invoke(
    { messages: [new HumanMessage("What is imatinib?")] },
    { configurable: { thread_id: "t-graph" } },
  );
  csrf = /name="_csrf" value="([0-9a-f]+)"/.exec((await runtime.get("/evidence")).body)?.[1] ?? "";
}, 60_000);

afterAll(async () => {
  await runtime?.close();
});

const GOOD_AND_BAD = [
  `- Imatinib is in ChEMBL [CHEMBL941](${IMATINIB_URL}).`,
  "- A forged link to the same record [CHEMBL941](https://evil.example/chembl941).",
].join("\n");

function claim(body: string, id: string): string {
  const start = body.indexOf(`<li class="claim" data-id="${id}"`);
  if (start < 0) throw new Error(`no claim ${id}`);
  const next = body.indexOf('<li class="claim" ', start + 1);
  return body.slice(start, next < 0 ? body.indexOf("</ol>", start) : next);
}

describe("GET /evidence", () => {
  test("the form: the answer, the recent sessions, the CSRF token, and the threads to pick", async () => {
    const { status, body } = await runtime.get("/evidence");
    expect(status).toBe(200);
    const form = elementById(body, "evidence-form");
    expect(form).toContain('method="post" action="/evidence"');
    expect(form).toContain(`<input type="hidden" name="_csrf" value="${csrf}">`);
    expect(csrf).toMatch(/^[0-9a-f]{64}$/);
    expect(form).toContain('<textarea id="answer" name="answer" required></textarea>');
    const sessions = elementById(form, "session-select");
    expect(sessions).toContain('<option value="">any session</option>');
    expect(sessions).toMatch(/<option value="s-evidence">s-evidence \(2 call\(s\), last /);
    expect(sessions).toContain('<option value="t-graph">');
    expect(elementById(body, "thread-select")).toContain('<option value="t-graph">t-graph</option>');
    // A session named in the link is chosen.
    const chosen = await runtime.get("/evidence?session=s-evidence");
    expect(elementById(chosen.body, "session-select")).toContain('<option value="s-evidence" selected>');
  });
});

describe("POST /evidence", () => {
  test("one good and one bad citation: one claim accepted and linked to its invocation, one rejected with its reason", async () => {
    const { status, body } = await runtime.post("/evidence", {
      _csrf: csrf,
      answer: GOOD_AND_BAD,
      session: "s-evidence",
    });
    expect(status).toBe(200);
    const result = elementById(body, "evidence-result");
    expect(result).toContain('data-accepted="false"');
    expect(result).toContain("1 of 2 claim(s) accepted, reviewed at <time");
    const good = claim(body, "fact-1");
    expect(good).toContain('data-accepted="true"');
    expect(good).toContain("Imatinib is in ChEMBL [CHEMBL941]");
    expect(hrefs(good)).toContain(`/invocations/${ids.imatinib}`);
    expect(good).toContain(
      `<a href="${IMATINIB_URL}" rel="noopener noreferrer nofollow" target="_blank">link</a>`,
    );
    const bad = claim(body, "fact-2");
    expect(bad).toContain('data-accepted="false"');
    expect(bad).toContain('data-reason="url_not_returned"');
    expect(bad).toContain("The URL https://evil.example/chembl941 is not one that invocation");
    // The forged URL is shown, never linked.
    expect(bad).toContain('<code class="cited-url">https://evil.example/chembl941</code>');
    expect(hrefs(bad).filter((href) => href.includes("evil"))).toEqual([]);
    // The answer stays in the form for another try.
    expect(elementById(body, "answer")).toContain("A forged link to the same record");
  });

  test("the same POST without the CSRF token, or with a wrong one, is refused", async () => {
    for (const fields of [
      { answer: GOOD_AND_BAD, session: "s-evidence" },
      { _csrf: "0".repeat(64), answer: GOOD_AND_BAD, session: "s-evidence" },
    ]) {
      const { status, body } = await runtime.post("/evidence", fields);
      expect(status).toBe(403);
      expect(body).not.toContain('id="evidence-result"');
    }
  });

  test("restricted to another session, a label no invocation of it returned is not traced", async () => {
    const { body } = await runtime.post("/evidence", {
      _csrf: csrf,
      answer: `Imatinib is in ChEMBL [CHEMBL941](${IMATINIB_URL}).`,
      session: "s-evidence",
      session_text: "s-nobody",
    });
    const only = claim(body, "fact-1");
    expect(only).toContain('data-reason="not_traced"');
    expect(only).toContain(
      "No successful governed invocation in the reviewed scope returned a record labelled CHEMBL941",
    );
    expect(hrefs(only).filter((href) => href.startsWith("/invocations/"))).toEqual([]);
    expect(body).toContain("of this session.");
  });

  test("hostile text in the answer and in the cited record renders only as text", async () => {
    const { body } = await runtime.post("/evidence", {
      _csrf: csrf,
      answer: "<script>alert(5)</script> is a molecule [CHEMBL990000].",
      session: "s-evidence",
    });
    const only = claim(body, "fact-1");
    expect(only).toContain('data-accepted="true"');
    expect(only).toContain("&lt;script&gt;alert(5)&lt;/script&gt; is a molecule");
    expect(only).toContain(`<span class="record-title">${HOSTILE_TITLE_ESCAPED}</span>`);
    expect(hrefs(only)).toContain(`/invocations/${ids.hostile}`);
    expect(body).not.toContain("<script>alert");
    expect(body).not.toContain("<img");
  });

  test("claims pasted as JSON are reviewed as given", async () => {
    const claims = [
      { text: "Imatinib is CHEMBL941", evidence: [{ mcpInvocationId: ids.imatinib, recordId: "CHEMBL941" }] },
      { text: "An invented call", evidence: [{ mcpInvocationId: "invented", recordId: "CHEMBL941" }] },
    ];
    const { body } = await runtime.post("/evidence", { _csrf: csrf, answer: JSON.stringify(claims) });
    expect(claim(body, "claim-1")).toContain('data-accepted="true"');
    expect(hrefs(claim(body, "claim-1"))).toContain(`/invocations/${ids.imatinib}`);
    const invented = claim(body, "claim-2");
    expect(invented).toContain('data-reason="not_governed"');
    expect(invented).toContain("Invocation &quot;invented&quot; is not in the governed ledger");
    expect(hrefs(invented).filter((href) => href.startsWith("/invocations/"))).toEqual([]);
  });

  test("an empty JSON list of claims backs nothing", async () => {
    const { status, body } = await runtime.post("/evidence", { _csrf: csrf, answer: "[]" });
    expect(status).toBe(200);
    expect(elementById(body, "evidence-result")).toContain('data-accepted="false"');
    expect(body).toContain("The text holds no fact to review.");
  });

  test("malformed JSON claims: 400 naming the field", async () => {
    const { status, body } = await runtime.post("/evidence", {
      _csrf: csrf,
      answer: JSON.stringify([{ text: "x", evidence: [{ mcpInvocationID: "typo" }] }]),
    });
    expect(status).toBe(400);
    expect(elementById(body, "evidence-error")).toContain("claims.0.evidence.0");
  });

  test("an empty answer is 400; facts past the limit are counted and said", async () => {
    expect((await runtime.post("/evidence", { _csrf: csrf, answer: "  " })).status).toBe(400);
    const answer = Array.from({ length: 205 }, (_, i) => `- Fact ${i} [CHEMBL941].`).join("\n");
    const { body } = await runtime.post("/evidence", { _csrf: csrf, answer, session: "s-evidence" });
    expect(body).toContain(
      "Not reviewed: 5 fact(s) and 5 citation(s) past the console&#39;s limits (200 facts, 500 citations per review).",
    );
    expect(body.match(/<li class="claim" /g)).toHaveLength(200);
    expect(elementById(body, "evidence-result")).toContain('data-accepted="false"');
  });
});

describe("GET /evidence?thread=", () => {
  test("reviews the thread's final answer from its checkpoint, scoped to the thread's session", async () => {
    const { status, body } = await runtime.get("/evidence?thread=t-graph");
    expect(status).toBe(200);
    expect(elementById(body, "reviewed-thread")).toContain("<code>t-graph</code>");
    expect(elementById(body, "answer")).toContain("Imatinib is a ChEMBL molecule [CHEMBL941]");
    const cited = claim(body, "fact-1");
    expect(cited).toContain('data-accepted="true"');
    expect(hrefs(cited)).toContain(`/invocations/${ids.graph}`);
    // The uncited sentence of the answer is its own, unbacked fact.
    expect(body).toContain('<li class="claim" data-id="fact-2" data-accepted="false">');
    expect(body).toContain("No citation: each fact needs the label");
  });

  test("the invocation page of a thread's call links to the review of its answer", async () => {
    const { body } = await runtime.get(`/invocations/${ids.graph}`);
    expect(hrefs(elementById(body, "invocation"))).toContain("/evidence?thread=t-graph");
  });

  test("a thread without an answer says so", async () => {
    const { status, body } = await runtime.get("/evidence?thread=t-unknown");
    expect(status).toBe(200);
    expect(elementById(body, "evidence-error")).toContain("Thread t-unknown has no final answer");
  });
});

test("a console without threadAnswer offers no thread to pick", async () => {
  const plain = await startConsoleRuntime();
  try {
    const { body } = await plain.get("/evidence?thread=t-graph");
    expect(body).not.toContain('id="thread-form"');
    expect(body).not.toContain('id="evidence-result"');
  } finally {
    await plain.close();
  }
});
