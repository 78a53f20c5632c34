/**
 * Approval cards in langchain's human-in-the-loop shape: langchain's own `createAgent` with
 * `governanceMiddleware` (cards in the `hitl` format by default), a real `MemorySaver` and a real
 * `@modelcontextprotocol/server-filesystem`. The interrupt values are checked against langchain's
 * exported `HITLRequest` type and the resume values are typed as its `HITLResponse`.
 */
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, type Interrupt, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createAgent, type HITLRequest, type HITLResponse } from "langchain";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { governanceMiddleware } from "../../src/adapters/governance-middleware.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import {
  type ApprovalHitlRequest,
  type ApprovalHitlResponse,
  type ApprovalInterruptValue,
  createApprovalGate,
  createAuthorizationApproval,
  executeGovernedToolCall,
} from "../../src/nodes/index.js";
import { promote, promotionReducer } from "../../src/visibility/index.js";
import {
  type ExecutorState,
  interruptsOf,
  toolMessagesById,
  WRITE_FILE,
  writerModel,
} from "./filesystem-executors.js";
import { exists, FILES, filesystemRuntimes } from "./filesystem-test-runtime.js";

const openRuntime = filesystemRuntimes();

/** Compile-time check: a Sciencegate `hitl` card is a langchain `HITLRequest`. */
const asLangchainRequest = (value: ApprovalHitlRequest): HITLRequest => value;
/** Compile-time check: Sciencegate's answer (with `scope`) is a langchain `HITLResponse`. */
const asLangchainResponse = (value: ApprovalHitlResponse): HITLResponse => value;

async function setup(options: Omit<Parameters<typeof governanceMiddleware>[0], "governance"> = {}) {
  const { governance, root } = await openRuntime();
  const agent = createAgent({
    model: writerModel(root, FILES),
    tools: [],
    middleware: [governanceMiddleware({ governance, ...options })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "t1" } };
  const start = async () =>
    (await agent.invoke(
      { messages: [{ role: "user", content: "Write the three notes." }] },
      config,
    )) as ExecutorState;
  const resume = async (value: unknown) =>
    (await agent.invoke(new Command({ resume: value }), config)) as ExecutorState;
  const ledgerRows = async () =>
    (await governance.ledger.query()).filter((row) => row.toolId === "write_file");
  const okWrites = async () => (await ledgerRows()).filter((row) => row.status === "ok");
  return { governance, root, start, resume, ledgerRows, okWrites };
}

/** The `hitl` interrupts of a paused run, by the file their call writes. */
function requestsByFile(state: ExecutorState): Map<string, Interrupt<ApprovalHitlRequest>> {
  const found = new Map<string, Interrupt<ApprovalHitlRequest>>();
  for (const raised of interruptsOf(state)) {
    const value = raised.value as ApprovalHitlRequest;
    const path = String(value.actionRequests[0].args.path);
    found.set(path.slice(path.lastIndexOf("/") + 1), raised as Interrupt<ApprovalHitlRequest>);
  }
  return found;
}

function idOf(state: ExecutorState, file: string): string {
  const id = requestsByFile(state).get(file)?.id;
  if (id === undefined) throw new Error(`no card for ${file}`);
  return id;
}

describe("createAgent + governanceMiddleware: approval cards as langchain HITL requests", () => {
  test("three parallel writes raise three HITLRequests, each one call with its native card under sciencegate", async () => {
    const { root, start } = await setup();
    const paused = await start();
    const raised = interruptsOf(paused);
    expect(raised).toHaveLength(3);
    for (const { value } of raised) {
      const request = asLangchainRequest(value as ApprovalHitlRequest);
      expect(request.actionRequests).toHaveLength(1);
      expect(request.reviewConfigs).toEqual([
        {
          actionName: WRITE_FILE,
          allowedDecisions: ["approve", "edit", "reject"],
          argsSchema: expect.objectContaining({
            properties: expect.objectContaining({ content: expect.anything() }),
          }),
        },
      ]);
      const [action] = request.actionRequests;
      const card = (value as ApprovalHitlRequest).sciencegate;
      expect(action?.name).toBe(WRITE_FILE);
      expect(action?.args).toEqual({ path: card.args.path, content: card.args.content });
      expect(action?.description).toContain(card.summary);
      expect(action?.description).toMatch(/Approve runs this call once.*Reject refuses it/s);
      expect(card).toMatchObject({ type: "permission", toolId: "write_file", risk: "write" });
    }
    for (const file of FILES) expect(await exists(join(root, file))).toBe(false);
  });

  test("approve, reject with a message and edit, answered by interrupt id: each call does what its answer says, once", async () => {
    const { root, start, resume, ledgerRows, okWrites } = await setup();
    const paused = await start();
    const answers: Record<string, HITLResponse> = {
      [idOf(paused, "a.txt")]: { decisions: [{ type: "approve" }] },
      [idOf(paused, "b.txt")]: { decisions: [{ type: "reject", message: "not b, write it to the wiki" }] },
      [idOf(paused, "c.txt")]: {
        decisions: [
          {
            type: "edit",
            editedAction: {
              name: WRITE_FILE,
              args: { path: join(root, "c-edited.txt"), content: "edited by a human" },
            },
          },
        ],
      },
    };
    const done = await resume(answers);
    expect(interruptsOf(done)).toEqual([]);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("content of a.txt");
    expect(await exists(join(root, "b.txt"))).toBe(false);
    expect(await exists(join(root, "c.txt"))).toBe(false);
    expect(await readFile(join(root, "c-edited.txt"), "utf8")).toBe("edited by a human");
    const replies = toolMessagesById(done);
    expect(replies.get("write-2")?.status).toBe("error");
    expect(JSON.parse(String(replies.get("write-2")?.content))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("not b, write it to the wiki"),
    });
    expect(replies.get("write-3")?.status).not.toBe("error");
    expect((await okWrites()).map((row) => row.toolCallId).sort()).toEqual(["write-1", "write-3"]);
    // The only refusal is the human's: the edited call ran under its own key, nothing clashed.
    const errors = (await ledgerRows()).filter((row) => row.status === "error");
    expect(errors.map((row) => [row.toolCallId, row.error?.code])).toEqual([
      ["write-2", "PERMISSION_DENIED"],
    ]);

    // A stray resume after the end runs nothing again.
    await resume({});
    expect(await okWrites()).toHaveLength(2);
  });

  test("a scalar resume {decisions: [approve]} approves every pending card", async () => {
    const { root, start, resume, okWrites } = await setup();
    await start();
    const done = await resume({ decisions: [{ type: "approve" }] } satisfies HITLResponse);
    expect(interruptsOf(done)).toEqual([]);
    for (const file of FILES) expect(await readFile(join(root, file), "utf8")).toBe(`content of ${file}`);
    expect(await okWrites()).toHaveLength(3);
  });

  test('approve with scope "matching" on one card releases its covered siblings on the same resume', async () => {
    const { root, start, resume, okWrites, governance } = await setup();
    const paused = await start();
    const matching: ApprovalHitlResponse = { decisions: [{ type: "approve", scope: "matching" }] };
    const done = await resume({ [idOf(paused, "a.txt")]: asLangchainResponse(matching) });
    expect(interruptsOf(done)).toEqual([]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(true);
    expect(await okWrites()).toHaveLength(3);
    expect(await governance.permissions.listGrants()).toHaveLength(1);
  });

  test('approve with scope "always" is allow_always: this call runs, the session switches to always_allow, its siblings follow', async () => {
    const { root, start, resume, okWrites, governance } = await setup();
    const paused = await start();
    const always: ApprovalHitlResponse = { decisions: [{ type: "approve", scope: "always" }] };
    const done = await resume({ [idOf(paused, "a.txt")]: asLangchainResponse(always) });
    expect(interruptsOf(done)).toEqual([]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(true);
    expect(await okWrites()).toHaveLength(3);
    expect(governance.permissions.approvalMode("t1")).toBe("always_allow");
    expect((await governance.ledger.listAuthorizations()).map((a) => a.decisionSource).sort()).toEqual([
      "always_allow",
      "always_allow",
      "user_always",
    ]);
  });

  test("malformed HITL answers ask the same card again with invalidResponse and run nothing", async () => {
    const { root, start, resume, okWrites } = await setup();
    let state = await start();
    const malformed: Array<[unknown, RegExp]> = [
      [{ decisions: [] }, /exactly one decision/],
      [{ decisions: [{ type: "approve" }, { type: "reject" }] }, /exactly one decision/],
      [{ decisions: [{ type: "maybe" }] }, /decisions\.0\.type/],
      [{ decisions: [{ type: "approve", scope: "forever" }] }, /scope: 'forever' is not offered/],
      [{ decisions: [{ type: "reject", message: 42 }] }, /decisions\.0\.message/],
      [
        { decisions: [{ type: "edit", editedAction: { name: "mcp__filesystem__move_file", args: {} } }] },
        /must keep the tool/,
      ],
      [{ decisions: [{ type: "edit" }] }, /editedAction/],
    ];
    for (const [answer, why] of malformed) {
      const before = idOf(state, "a.txt");
      state = await resume({ [before]: answer });
      const again = requestsByFile(state).get("a.txt");
      expect(again?.id).not.toBe(before);
      expect(again?.value?.sciencegate.invalidResponse).toMatch(why);
      expect(again?.value?.actionRequests[0].description).toMatch(/^Invalid answer/);
      expect(interruptsOf(state)).toHaveLength(3);
    }
    expect(await okWrites()).toEqual([]);
    for (const file of FILES) expect(await exists(join(root, file))).toBe(false);
    // The native answer is accepted by an hitl card too.
    const done = await resume({ decisions: [{ type: "approve" }] });
    expect(interruptsOf(done)).toEqual([]);
    expect(await okWrites()).toHaveLength(3);
  });

  test("an edit whose arguments fail validation gets INVALID_INPUT and nothing runs", async () => {
    const { root, start, resume, okWrites } = await setup();
    const paused = await start();
    const done = await resume({
      [idOf(paused, "a.txt")]: {
        decisions: [
          { type: "edit", editedAction: { name: WRITE_FILE, args: { path: join(root, "x.txt") } } },
        ],
      },
      [idOf(paused, "b.txt")]: { decisions: [{ type: "reject" }] },
      [idOf(paused, "c.txt")]: { decisions: [{ type: "reject" }] },
    });
    const reply = toolMessagesById(done).get("write-1");
    expect(reply?.status).toBe("error");
    expect(JSON.parse(String(reply?.content))).toMatchObject({ code: "INVALID_INPUT" });
    expect(await exists(join(root, "x.txt"))).toBe(false);
    expect(await exists(join(root, "a.txt"))).toBe(false);
    expect(await okWrites()).toEqual([]);
  });

  test('cardFormat: "native" keeps the PermissionCard, which also accepts an HITLResponse', async () => {
    const { root, start, resume } = await setup({ cardFormat: "native" });
    const paused = await start();
    const values = interruptsOf(paused).map((i) => i.value as ApprovalInterruptValue);
    expect(values.map((v) => v.type)).toEqual(["permission", "permission", "permission"]);
    await resume({ decisions: [{ type: "approve" }] });
    for (const file of FILES) expect(await exists(join(root, file))).toBe(true);
  });
});

describe("an edited call whose task runs again", () => {
  test("the same resume value replays the edited call: no second write, no 'already used for a different call'", async () => {
    const { governance, root } = await openRuntime();
    const gate = createApprovalGate({ governance, cardFormat: "hitl" });
    const tools = governance.tools("s1");
    const promotion = promotionReducer(undefined, promote([WRITE_FILE], tools));
    let runs = 0;
    // One task: the governed call, then a second question in the same task, so answering the
    // second one runs the whole task (and the approval) again.
    const graph = new StateGraph(z.object({ result: z.string().optional(), note: z.string().optional() }))
      .addNode("write", async (_state, config) => {
        runs += 1;
        const outcome = await executeGovernedToolCall(
          governance,
          { id: "call-1", name: WRITE_FILE, args: { path: join(root, "a.txt"), content: "model" } },
          { sessionId: "s1", threadId: "t1", promotion, approval: { hook: gate, config } },
        );
        const note = interrupt<string, string>("anything to add?");
        return { result: String(outcome.message.content), note };
      })
      .addEdge(START, "write")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1" } };
    await graph.invoke({}, config);
    const edit: HITLResponse = {
      decisions: [
        {
          type: "edit",
          editedAction: { name: WRITE_FILE, args: { path: join(root, "b.txt"), content: "human" } },
        },
      ],
    };
    const second = await graph.invoke(new Command({ resume: edit }), config);
    expect(await readFile(join(root, "b.txt"), "utf8")).toBe("human");
    expect(interruptsOf(second).map((i) => i.value)).toEqual(["anything to add?"]);
    const done = await graph.invoke(new Command({ resume: "no" }), config);
    expect(runs).toBe(3);
    expect(done.note).toBe("no");
    expect(done.result).toMatch(/^mcpInvocationId: /);
    expect(
      await access(join(root, "a.txt")).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    const rows = (await governance.ledger.query()).filter((row) => row.toolId === "write_file");
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
  });
});

describe("the other executors", () => {
  test('createGovernedAgent raises HITL requests by default and runs an edit; cardFormat: "native" keeps the PermissionCard', async () => {
    const { governance, root } = await openRuntime();
    const native = createGovernedAgent({
      model: writerModel(root, FILES, "d"),
      governance,
      checkpointer: new MemorySaver(),
      cardFormat: "native",
    });
    const start = { messages: [new HumanMessage("Write the three notes.")] };
    const nativeCards = await native.invoke(start, { configurable: { thread_id: "native" } });
    expect(interruptsOf(nativeCards).map((i) => (i.value as ApprovalInterruptValue).type)).toEqual([
      "permission",
      "permission",
      "permission",
    ]);

    const agent = createGovernedAgent({
      model: writerModel(root, FILES, "h"),
      governance,
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "hitl" } };
    const paused = (await agent.invoke(start, config)) as ExecutorState;
    expect(interruptsOf(paused).map((i) => (i.value as ApprovalHitlRequest).actionRequests[0].name)).toEqual([
      WRITE_FILE,
      WRITE_FILE,
      WRITE_FILE,
    ]);
    const edit: HITLResponse = {
      decisions: [
        {
          type: "edit",
          editedAction: { name: WRITE_FILE, args: { path: join(root, "a.txt"), content: "edited" } },
        },
      ],
    };
    await agent.invoke(
      new Command({
        resume: {
          [idOf(paused, "a.txt")]: edit,
          [idOf(paused, "b.txt")]: { decisions: [{ type: "reject" }] },
          [idOf(paused, "c.txt")]: { decision: "deny" },
        },
      }),
      config,
    );
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("edited");
    expect(await exists(join(root, "b.txt"))).toBe(false);
  });

  test("a card whose call cannot be edited (as artifact_download's) offers approve and reject only and asks again on edit", async () => {
    const { governance, root } = await openRuntime();
    const approve = createAuthorizationApproval(governance, { cardFormat: "hitl" });
    const request = createAuthorizationRequest(governance.catalog, {
      sourceId: "filesystem",
      toolId: "write_file",
      input: { path: join(root, "d.txt"), content: "x" },
      sessionId: "s1",
      toolCallId: "d-1",
      threadId: "t1",
    });
    const graph = new StateGraph(z.object({ outcome: z.string().optional() }))
      .addNode("ask", async () => {
        const decision = await approve("s1", request, { name: "artifact_download", editable: false });
        return { outcome: JSON.stringify(decision ?? "pass") };
      })
      .addEdge(START, "ask")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1" } };
    const paused = await graph.invoke({}, config);
    const [card] = interruptsOf(paused) as Interrupt<ApprovalHitlRequest>[];
    expect(card?.value?.reviewConfigs).toEqual([
      { actionName: "artifact_download", allowedDecisions: ["approve", "reject"] },
    ]);
    expect(card?.value?.actionRequests[0].description).not.toContain("Edit");
    const edited = await graph.invoke(
      new Command({
        resume: { decisions: [{ type: "edit", editedAction: { name: "artifact_download", args: {} } }] },
      }),
      config,
    );
    const [again] = interruptsOf(edited) as Interrupt<ApprovalHitlRequest>[];
    expect(again?.value?.sciencegate.invalidResponse).toMatch(/does not accept edits/);
    const done = await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(done.outcome).toBe('"pass"');
    expect(governance.permissions.listPending({ threadId: "t1" }).filter((p) => p.state === "open")).toEqual(
      [],
    );
  });
});
