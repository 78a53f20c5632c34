/**
 * The gateway's approvals over MCP elicitation, with real SDK clients over in-memory transports: a
 * client that declares `elicitation` answers the form (allow once, allow matching, allow always, deny,
 * decline, cancel, malformed answers, a cancelled tool call); a client without it gets the structured
 * refusal. The recorded rows are those of a card answered in a graph.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  createElicitationApproval,
  createGatewayServer,
  type GatewayServer,
  type GatewayServerOptions,
} from "../../src/gateway/index.js";
import { createLab, type Lab } from "./gateway-harness.js";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.governance.close();
  gateway = undefined;
  lab = undefined;
});

type Answer = (request: ElicitRequest, signal: AbortSignal) => ElicitResult | Promise<ElicitResult>;

/** A client of one session; `answers` are used in order, one per elicitation. */
interface Asked {
  sessionId: string;
  call: (name: string, args: Record<string, unknown>, signal?: AbortSignal) => Promise<CallToolResult>;
  /** The elicitation requests received, in order. */
  asked: ElicitRequest["params"][];
}

async function setup(
  answers: Answer[] | undefined,
  options: Omit<GatewayServerOptions, "governance"> & { capabilities?: ClientCapabilities } = {},
): Promise<{ lab: Lab; client: Asked }> {
  const { capabilities, ...gatewayOptions } = options;
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true, ...gatewayOptions });
  return { lab, client: await connect(gateway, answers, capabilities) };
}

/** A client of a new session; with `answers` it declares `elicitation` (unless `capabilities` says otherwise). */
async function connect(
  server: GatewayServer,
  answers: Answer[] | undefined,
  capabilities: ClientCapabilities = answers ? { elicitation: {} } : {},
): Promise<Asked> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = await server.connect(serverSide);
  const client = new Client({ name: "elicitation-test-client", version: "1.0.0" }, { capabilities });
  const asked: ElicitRequest["params"][] = [];
  if (answers) {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      asked.push(request.params);
      const answer = answers[asked.length - 1];
      if (!answer) throw new Error(`unexpected elicitation #${asked.length}`);
      return answer(request, extra.signal);
    });
  }
  await client.connect(clientSide);
  return {
    sessionId: session.sessionId,
    asked,
    call: async (name, args, signal) =>
      (await client.callTool(
        { name, arguments: args },
        undefined,
        signal ? { signal } : {},
      )) as CallToolResult,
  };
}

/** A lab whose gateway uses the approval built from it. */
async function setupWithApproval(
  approvalOf: (made: Lab) => NonNullable<GatewayServerOptions["approval"]>,
  answers: Answer[] | undefined,
): Promise<{ lab: Lab; client: Asked }> {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true, approval: approvalOf(lab) });
  return { lab, client: await connect(gateway, answers) };
}

const accept =
  (content: ElicitResult["content"]): Answer =>
  () =>
    content === undefined ? { action: "accept" } : { action: "accept", content };
const decide = (decision: string, message?: string): Answer =>
  accept(message === undefined ? { decision } : { decision, message });

async function authorizations(lab: Lab, sessionId: string) {
  return lab.governance.ledger.listAuthorizations({ sessionId });
}

async function invocations(lab: Lab, sessionId: string) {
  const rows = await lab.governance.ledger.query({ sessionId });
  return rows.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

describe("elicitation: what the client is asked", () => {
  test("a dangerous call asks once with the card's text and a form of the four decisions; allow once runs it once and the next identical call asks again", async () => {
    const { lab, client } = await setup([decide("allow_once"), decide("deny")]);
    const first = await client.call("mcp__lab__write", { query: "x" });
    expect(first.isError).toBeUndefined();
    expect(lab.calls.write).toBe(1);
    expect(client.asked).toHaveLength(1);
    const [form] = client.asked;
    expect(form?.message).toContain("Run write");
    expect(form?.message).toContain(
      "Tool mcp__lab__write · action demo:write · resource demo:write · risk write",
    );
    expect(form?.message).toContain(
      "Allow matching: this call, and every demo:write call, whatever its arguments, for the rest of this session.",
    );
    expect(form?.message).toContain("Deny: refuse this call; your message is shown to the model.");
    expect(form).toMatchObject({
      requestedSchema: {
        type: "object",
        properties: {
          decision: {
            type: "string",
            enum: ["allow_once", "allow_matching", "allow_always", "deny"],
            enumNames: ["Allow once", "Allow matching", "Allow always", "Deny"],
          },
          message: { type: "string", maxLength: 2000 },
        },
        required: ["decision"],
      },
    });

    const second = await client.call("mcp__lab__write", { query: "x" });
    expect(second.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(client.asked).toHaveLength(2);
    expect(lab.calls.write).toBe(1);
    const [once, deny] = await authorizations(lab, client.sessionId);
    expect(once).toMatchObject({ decisionSource: "user_once", action: "demo:write", resource: "demo:write" });
    expect(deny).toMatchObject({ decisionSource: "user_deny", epoch: (once?.epoch ?? 0) + 1 });
    const rows = await invocations(lab, client.sessionId);
    expect(rows).toMatchObject([
      { status: "ok", authorizationId: once?.id, toolCallId: once?.toolCallId },
      { status: "error", error: { code: "PERMISSION_DENIED" }, authorizationId: deny?.id },
    ]);
  });

  test("safe calls never ask", async () => {
    const { lab, client } = await setup([]);
    expect((await client.call("mcp__lab__search", { query: "x" })).isError).toBeUndefined();
    expect((await client.call("mcp__lab__lookup", { query: "y" })).isError).toBeUndefined();
    expect(client.asked).toEqual([]);
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual([
      "policy_not_dangerous",
      "policy_not_dangerous",
    ]);
  });

  test("allow matching records a grant bound to the tool's definition; the next matching call runs without asking", async () => {
    const { lab, client } = await setup([decide("allow_matching")]);
    expect((await client.call("mcp__lab__write", { query: "a" })).isError).toBeUndefined();
    expect((await client.call("mcp__lab__write", { query: "b" })).isError).toBeUndefined();
    expect(client.asked).toHaveLength(1);
    expect(lab.calls.write).toBe(2);
    const write = lab.governance.tools(client.sessionId).find((t) => t.name === "mcp__lab__write");
    expect(await lab.governance.permissions.listGrants({ sessionId: client.sessionId })).toMatchObject([
      { action: "demo:write", resource: "demo:write", toolDefinitionHash: write?.definitionHash },
    ]);
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual([
      "user_grant",
      "existing_grant",
    ]);
  });

  test("allow always switches the session to always_allow; later dangerous calls run without asking", async () => {
    const { lab, client } = await setup([decide("allow_always")]);
    expect((await client.call("mcp__lab__write", { query: "a" })).isError).toBeUndefined();
    expect((await client.call("mcp__lab__write", { query: "b" })).isError).toBeUndefined();
    expect(client.asked).toHaveLength(1);
    expect(lab.governance.permissions.approvalMode(client.sessionId)).toBe("always_allow");
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual([
      "user_always",
      "always_allow",
    ]);
  });

  test.each([
    [
      "deny with a message",
      decide("deny", "  use lookup instead "),
      "denied by the user: use lookup instead",
    ],
    ["decline", (() => ({ action: "decline" })) as Answer, "denied by the user"],
    [
      "cancel (dismissed)",
      (() => ({ action: "cancel" })) as Answer,
      "denied by the user: the user dismissed the approval request without answering",
    ],
  ])(
    "%s: nothing runs, the model-visible error carries it, one user_deny row",
    async (_name, answer, reason) => {
      const { lab, client } = await setup([answer]);
      const result = await client.call("mcp__lab__write", { query: "x" });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        code: "PERMISSION_DENIED",
        message: expect.stringContaining(reason),
      });
      expect(lab.calls.write).toBeUndefined();
      const [row] = await authorizations(lab, client.sessionId);
      expect(row).toMatchObject({ decisionSource: "user_deny" });
      expect(await invocations(lab, client.sessionId)).toMatchObject([
        { status: "error", error: { code: "PERMISSION_DENIED" }, authorizationId: row?.id },
      ]);
    },
  );
});

describe("elicitation: bad answers, cancellation, timeouts", () => {
  test("malformed answers ask again, saying what was wrong; a valid third answer is recorded", async () => {
    const { lab, client } = await setup([
      accept({ decision: "maybe" }),
      accept(undefined),
      decide("allow_once"),
    ]);
    expect((await client.call("mcp__lab__write", { query: "x" })).isError).toBeUndefined();
    expect(client.asked).toHaveLength(3);
    expect(client.asked[0]?.message).not.toContain("Invalid answer");
    expect(client.asked[1]?.message).toMatch(/^Invalid answer \(decision: 'maybe' is not offered\)/);
    expect(client.asked[2]?.message).toMatch(/^Invalid answer \(accepted without the form's content\)/);
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual(["user_once"]);
  });

  test("three malformed answers (an error reply among them) deny the call as cancelled; nothing runs", async () => {
    const { lab, client } = await setup([
      accept({ message: "no decision" }),
      () => {
        throw new Error("the form broke");
      },
      accept({ decision: 42 }),
    ]);
    const result = await client.call("mcp__lab__write", { query: "x" });
    expect(result.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("no valid answer in 3 tries"),
    });
    expect(client.asked[2]?.message).toContain("The client failed the approval request");
    expect(lab.calls.write).toBeUndefined();
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual(["cancelled"]);
  });

  test("a client cancellation during the question aborts the elicitation and records the card as cancelled", async () => {
    let elicitationAborted = false;
    let asking!: () => void;
    const asked = new Promise<void>((resolve) => {
      asking = resolve;
    });
    // One answered question first: the SDK's client ignores a cancellation of request id 0.
    const { lab, client } = await setup([
      decide("allow_once"),
      (_request, signal) =>
        new Promise<ElicitResult>((_resolve, reject) => {
          asking();
          signal.addEventListener("abort", () => {
            elicitationAborted = true;
            reject(new Error("aborted"));
          });
        }),
    ]);
    expect((await client.call("mcp__lab__write", { query: "x" })).isError).toBeUndefined();
    const controller = new AbortController();
    const running = client.call("mcp__lab__write", { query: "x" }, controller.signal);
    await asked;
    controller.abort("the user stopped it");
    await expect(running).rejects.toThrow();
    await vi.waitFor(() => expect(elicitationAborted).toBe(true));
    await vi.waitFor(async () => {
      const [, row] = await authorizations(lab, client.sessionId);
      expect(row).toMatchObject({ decisionSource: "cancelled" });
      expect(await invocations(lab, client.sessionId)).toMatchObject([
        { status: "ok" },
        {
          status: "error",
          authorizationId: row?.id,
          error: {
            code: "PERMISSION_DENIED",
            message: expect.stringContaining("the tool call was cancelled"),
          },
        },
      ]);
    });
    expect(lab.calls.write).toBe(1);
    expect(lab.governance.permissions.listPending()).toEqual([]);
  });

  test("waitTimeoutMs: an unanswered question ends as a wait_timeout denial", async () => {
    const { lab, client } = await setupWithApproval(
      (made) => createElicitationApproval({ governance: made.governance, waitTimeoutMs: 50 }),
      [() => new Promise<ElicitResult>(() => {})],
    );
    const result = await client.call("mcp__lab__write", { query: "x" });
    expect(result.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("nobody answered the approval request within 50 ms"),
    });
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual([
      "wait_timeout",
    ]);
  });
});

describe("without elicitation", () => {
  test.each([
    ["no elicitation capability", {}],
    ["URL elicitation only", { elicitation: { url: {} } }],
  ])(
    "%s: a structured PERMISSION_DENIED with the card; nothing runs, nothing is asked",
    async (_name, capabilities) => {
      const { lab, client } = await setup(undefined, { capabilities });
      const result = await client.call("mcp__lab__write", { query: "x" });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        code: "PERMISSION_DENIED",
        retryable: false,
        message: expect.stringContaining("did not declare the elicitation capability"),
        data: {
          approvalRequired: true,
          card: { action: "demo:write", matchingScope: { resource: "demo:write" } },
        },
      });
      expect(lab.calls.write).toBeUndefined();
      expect(await invocations(lab, client.sessionId)).toMatchObject([
        { status: "error", error: { code: "PERMISSION_DENIED" } },
      ]);
    },
  );

  test("with out-of-band commands the client is told their short form (no path of the gateway's machine), the operator the complete one; a grant recorded the way `grants add` does it makes the retry run", async () => {
    const reported: string[] = [];
    const outOfBand = {
      cli: "SCIENCEGATE_HOME=/srv/data sciencegate",
      catalogArgs: ["--config", "/srv/c.json"],
      modesShared: true,
      report: (line: string) => reported.push(line),
    };
    const { lab, client } = await setupWithApproval(
      (made) => createElicitationApproval({ governance: made.governance, outOfBand }),
      undefined,
    );
    const refused = await client.call("mcp__lab__write", { query: "x" });
    const grant = `sciencegate grants add --session ${client.sessionId} --tool mcp__lab__write --resource demo:write`;
    const mode = `sciencegate grants mode --session ${client.sessionId} always_allow`;
    expect(refused.structuredContent).toMatchObject({ data: { approve: { grant, mode } } });
    const message = (refused.structuredContent as { message: string }).message;
    expect(message).toContain(`runs \`${grant}\` with the gateway's data directory and catalog`);
    expect(JSON.stringify(refused)).not.toContain("/srv/");
    expect(reported).toEqual([
      `a call of mcp__lab__write in session ${client.sessionId} needs approval: run SCIENCEGATE_HOME=/srv/data ${grant} --config /srv/c.json (or SCIENCEGATE_HOME=/srv/data ${mode})`,
    ]);

    const write = lab.governance.catalog.requireTool("lab", "write");
    const source = lab.governance.catalog.source("lab");
    await lab.governance.permissions.grant({
      sessionId: client.sessionId,
      sourceId: "lab",
      toolId: "write",
      source: source?.manifest as never,
      tool: write.manifest,
      definitionHash: write.definitionHash,
      input: {},
    });
    expect((await client.call("mcp__lab__write", { query: "x" })).isError).toBeUndefined();
    expect((await authorizations(lab, client.sessionId)).map((a) => a.decisionSource)).toEqual([
      "user_grant",
      "existing_grant",
    ]);
  });

  test("approval: false asks nobody: the broker refuses with its own advice", async () => {
    const { lab, client } = await setup([], { approval: false, capabilities: { elicitation: {} } });
    const result = await client.call("mcp__lab__write", { query: "x" });
    expect(result.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("approval required"),
    });
    expect(client.asked).toEqual([]);
    expect(lab.calls.write).toBeUndefined();
  });
});
