import { HumanMessage, type ToolMessage, ToolMessage as ToolMessageClass } from "@langchain/core/messages";
import { Command, type Interrupt, MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import type { DownloadLedgerEntry } from "../../src/artifacts/artifact-ledger-types.js";
import type { PermissionCard } from "../../src/governance/permissions/permission-types.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { interruptsOf } from "../nodes/approval-harness.js";
import { answer, callTools, RecordingChatModel } from "../nodes/recording-chat-model.js";
import { closeDownloadRuntimes, downloadRuntime, IDS, SlowReadLedger } from "./download-runtime.js";

afterEach(closeDownloadRuntimes);

/** An agent whose model asks for both downloads in one turn (b from `bFrom`), then answers. */
function downloadAgent(governance: Governance, withCheckpointer = true, bFrom = "inv-1") {
  const model = new RecordingChatModel([
    callTools(
      ...IDS.map((id) => ({
        id: `dl-${id}`,
        name: "artifact_download",
        args: { mcpInvocationId: id === "b" ? bFrom : "inv-1", candidateId: id },
      })),
    ),
    answer("done"),
  ]);
  return createGovernedAgent({
    model,
    governance,
    ...(withCheckpointer ? { checkpointer: new MemorySaver() } : {}),
  });
}

type Agent = ReturnType<typeof downloadAgent>;
type AgentInput = Parameters<Agent["invoke"]>[0];
const go = { messages: [new HumanMessage("get both papers")] };
const thread = { configurable: { thread_id: "t1" } };
/** The cards of a paused run, as native cards (langchain's `HITLRequest`, the default, carries one). */
const cardsOf = interruptsOf;
const cardOf = (values: unknown, id: string) => {
  const found = cardsOf(values).find((card) => card.value?.args.candidateId === id);
  if (!found) throw new Error(`no card for ${id}`);
  return found;
};
const resume = (answers: Array<[Interrupt<PermissionCard>, unknown]>) =>
  new Command({ resume: Object.fromEntries(answers.map(([card, value]) => [card.id, value])) }) as AgentInput;
const replies = (values: { messages: unknown[] }) =>
  new Map(
    values.messages
      .filter((m): m is ToolMessage => ToolMessageClass.isInstance(m))
      .map((m) => [m.tool_call_id, { status: m.status, body: JSON.parse(String(m.content)) }]),
  );
const downloadRows = async (governance: Governance) =>
  governance.ledger.query({ toolId: "artifact_download" });
const decisionSources = async (governance: Governance) =>
  (await governance.ledger.listAuthorizations()).map((a) => a.decisionSource).sort();

describe("artifact_download approval card", () => {
  test("two downloads of one turn pause with two independent cards naming file, source and destination", async () => {
    const { governance, transfers } = await downloadRuntime();
    const paused = await downloadAgent(governance).invoke(go, thread);
    const cards = cardsOf(paused);
    expect(cards).toHaveLength(2);
    expect(new Set(cards.map((c) => c.id)).size).toBe(2);
    const card = cardOf(paused, "a");
    expect(card.value).toMatchObject({
      type: "permission",
      action: "download",
      resource: "artifact:arxiv:2401.0000a:downloads/arxiv/2401.0000a.pdf",
      sourceId: "sciencegate", // the built-ins' source; the candidate's is in resource and args
      toolId: "artifact_download",
      toolCallId: "dl-a",
      risk: "download",
      args: {
        mcpInvocationId: "inv-1",
        candidateId: "a",
        url: "https://arxiv.org/pdf/a",
        destinationPath: "downloads/arxiv/2401.0000a.pdf",
        format: "pdf",
        kind: "paper",
        license: "CC-BY-4.0",
      },
    });
    expect(card.value?.summary).toBe(
      'Download "2401.0000a.pdf" from arXiv (arxiv record 2401.0000a, host arxiv.org) to downloads/arxiv/2401.0000a.pdf in the workspace',
    );
    expect(card.response_schema).toMatchObject({
      anyOf: [{ required: ["decision"] }, { required: ["decisions"] }],
    });
    // Nothing happened before the answers: no request, no job, no row.
    expect(transfers).toEqual([]);
    expect(await governance.downloads.list()).toEqual([]);
    expect(await downloadRows(governance)).toEqual([]);
  });

  test("answering one card, then the other: one transfer per file and one ledger row per call", async () => {
    const { governance, transfers, store } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const half = await agent.invoke(resume([[cardOf(paused, "a"), { decision: "allow_once" }]]), thread);
    expect(cardsOf(half).map((c) => c.id)).toEqual([cardOf(paused, "b").id]);
    expect(transfers).toEqual(["https://arxiv.org/pdf/a"]);
    const done = await agent.invoke(resume([[cardOf(paused, "b"), { decision: "allow_once" }]]), thread);
    expect(cardsOf(done)).toEqual([]);
    expect(transfers.sort()).toEqual(["https://arxiv.org/pdf/a", "https://arxiv.org/pdf/b"]);
    const byCall = replies(done);
    for (const id of IDS) {
      expect(byCall.get(`dl-${id}`)).toMatchObject({ status: "success", body: { status: "completed" } });
    }
    const rows = await downloadRows(governance);
    expect(rows.map((r) => [r.toolCallId, r.status, r.sourceId, r.license]).sort()).toEqual([
      ["dl-a", "ok", "sciencegate", "CC-BY-4.0"],
      ["dl-b", "ok", "sciencegate", "CC-BY-4.0"],
    ]);
    // Each row points at the user's decision and at a CAS entry naming its job.
    const auths = await governance.ledger.listAuthorizations();
    for (const row of rows) {
      expect(auths.find((a) => a.id === row.authorizationId)).toMatchObject({
        toolCallId: row.toolCallId,
        decisionSource: "user_once",
        resource: "artifact:arxiv",
      });
      const entry = await store.getJson<DownloadLedgerEntry>(row.normalizedRef as string);
      expect(entry).toMatchObject({
        kind: "artifact_download",
        status: "completed",
        jobId: expect.any(String),
      });
      expect(byCall.get(row.toolCallId as string)?.body.jobId).toBe(entry.jobId);
    }
    // A stray resume re-runs nothing.
    await agent.invoke(new Command({ resume: {} }) as AgentInput, thread);
    expect(transfers).toHaveLength(2);
    expect(await downloadRows(governance)).toHaveLength(2);
    expect(await governance.downloads.list()).toHaveLength(2);
  });

  test("a finished call that runs again (its checkpoint lost) asks nothing and transfers nothing", async () => {
    const { governance, transfers } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const first = await agent.invoke(
      resume(IDS.map((id) => [cardOf(paused, id), { decision: "allow_once" }])),
      thread,
    );
    // A new checkpointer: the same thread and tool call ids run from scratch, as after a crash.
    const again = await downloadAgent(governance).invoke(go, thread);
    expect(cardsOf(again)).toEqual([]);
    expect(transfers).toHaveLength(2);
    expect(await downloadRows(governance)).toHaveLength(2);
    for (const id of IDS) {
      expect(replies(again).get(`dl-${id}`)).toEqual(replies(first).get(`dl-${id}`));
    }
  });

  test("allow_matching on one card releases the other download of the same source on the same resume", async () => {
    const { governance, transfers } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const done = await agent.invoke(resume([[cardOf(paused, "b"), { decision: "allow_matching" }]]), thread);
    expect(cardsOf(done)).toEqual([]);
    expect(transfers.sort()).toEqual(["https://arxiv.org/pdf/a", "https://arxiv.org/pdf/b"]);
    const grants = await governance.permissions.listGrants({ sessionId: "t1" });
    expect(grants.map((g) => [g.action, g.resource])).toEqual([["download", "artifact:arxiv"]]);
    expect(await decisionSources(governance)).toEqual(["existing_grant", "user_grant"]);
  });

  test("allow_matching on a card whose plan is slow still releases its sibling on the same resume", async () => {
    const { governance, transfers } = await downloadRuntime({}, new SlowReadLedger("inv-2"));
    const agent = downloadAgent(governance, true, "inv-2");
    const paused = await agent.invoke(go, thread);
    const done = await agent.invoke(resume([[cardOf(paused, "b"), { decision: "allow_matching" }]]), thread);
    expect(cardsOf(done)).toEqual([]);
    expect(transfers.sort()).toEqual(["https://arxiv.org/pdf/a", "https://arxiv.org/pdf/b"]);
  });

  test("a resume answering both cards at once runs both", async () => {
    const { governance, transfers } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const done = await agent.invoke(
      resume(IDS.map((id) => [cardOf(paused, id), { decision: "allow_once" }])),
      thread,
    );
    expect(cardsOf(done)).toEqual([]);
    expect(transfers).toHaveLength(2);
    expect(await governance.permissions.listGrants()).toEqual([]);
  });

  test("deny refuses only its download with the human's message: no job, no transfer, an audited refusal", async () => {
    const { governance, transfers } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const done = await agent.invoke(
      resume([
        [cardOf(paused, "a"), { decision: "deny", message: "not this preprint" }],
        [cardOf(paused, "b"), { decision: "allow_once" }],
      ]),
      thread,
    );
    const denied = replies(done).get("dl-a");
    expect(denied).toMatchObject({
      status: "error",
      body: {
        code: "PERMISSION_DENIED",
        retryable: false,
        message: expect.stringContaining("not this preprint"),
      },
    });
    expect(transfers).toEqual(["https://arxiv.org/pdf/b"]);
    expect((await governance.downloads.list()).map((job) => job.candidateId)).toEqual(["b"]);
    const refusal = (await downloadRows(governance)).find((r) => r.toolCallId === "dl-a");
    const deny = (await governance.ledger.listAuthorizations()).find((a) => a.decisionSource === "user_deny");
    expect(refusal).toMatchObject({ status: "error", error: { code: "PERMISSION_DENIED" }, attempts: 0 });
    expect(refusal?.authorizationId).toBe(deny?.id);
    expect(refusal?.normalizedRef).toBeUndefined();
  });

  test("a malformed answer asks again with invalidResponse and starts nothing", async () => {
    const { governance, transfers } = await downloadRuntime();
    const agent = downloadAgent(governance);
    const paused = await agent.invoke(go, thread);
    const bad = await agent.invoke(resume([[cardOf(paused, "a"), { decision: "yes please" }]]), thread);
    const again = cardOf(bad, "a");
    expect(again.id).not.toBe(cardOf(paused, "a").id);
    expect((again.value as { invalidResponse?: string }).invalidResponse).toContain("decision");
    expect(transfers).toEqual([]);
    expect(await governance.ledger.listAuthorizations()).toEqual([]);
  });

  test("an always_allow session downloads without a card", async () => {
    const { governance, transfers } = await downloadRuntime();
    governance.permissions.setApprovalMode("t1", "always_allow");
    const done = await downloadAgent(governance).invoke(go, thread);
    expect(cardsOf(done)).toEqual([]);
    expect(transfers).toHaveLength(2);
    expect(await decisionSources(governance)).toEqual(["always_allow", "always_allow"]);
  });

  test("without a checkpointer the graph cannot pause: the download is refused, nothing fetched", async () => {
    // Without a thread the graph runs in session `default`, where the candidate's call was made.
    const { governance, transfers } = await downloadRuntime({}, undefined, "default");
    const done = await downloadAgent(governance, false).invoke(go);
    expect(replies(done).get("dl-a")).toMatchObject({
      status: "error",
      // The broker's permission step refuses it, naming what lets a person answer (a checkpointer).
      body: { code: "PERMISSION_DENIED", message: expect.stringContaining("checkpointer") },
    });
    expect(transfers).toEqual([]);
    expect(await governance.downloads.list()).toEqual([]);
  });
});
