/**
 * A governed agent over a counting lab server for the approval tests (a `createTestGovernance`
 * runtime): `write` and `delete` are not read-only (dangerous), `search` is safe; every MCP call is
 * counted per tool and query.
 */
import { HumanMessage, type ToolMessage, ToolMessage as ToolMessageClass } from "@langchain/core/messages";
import { Command, INTERRUPT, type Interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach } from "vitest";
import { z } from "zod";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import type { LedgerStore } from "../../src/governance/audit/index.js";
import type { SessionStateStore } from "../../src/governance/permissions/index.js";
import type { PermissionCard, PermissionPolicy } from "../../src/governance/permissions/permission-types.js";
import type { ApprovalHook } from "../../src/nodes/approval-hook.js";
import type { ApprovalHitlRequest } from "../../src/nodes/hitl-protocol.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createTestGovernance } from "../../src/testing/create-test-governance.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { answer, callTools, RecordingChatModel } from "./recording-chat-model.js";

/** The lab runtime. */
export interface LabRuntime {
  governance: Governance;
  /** Closes the runtime and removes its temporary data directory. */
  close(): Promise<void>;
  clock: ManualClock;
  /** MCP calls per `tool:query`. */
  calls: Record<string, number>;
  /** Changes a tool's live description (a new definition hash) and refreshes the catalog. */
  changeDescription(tool: string, description: string): Promise<void>;
}

const dangerous = (id: string) =>
  makeTool({
    id,
    readOnly: false,
    permission: {
      action: `lab:${id}`,
      resourceTemplate: `lab:${id}:{query}`,
      summaryTemplate: `${id} "{query}" in the lab`,
    },
    routing: { keywords: [], mode: "off", priority: 0 },
  });

/** What replicas of the lab share: the session state store, the ledger and the MCP call counter. */
export interface LabReplica {
  /** @default in memory */
  sessionState?: SessionStateStore;
  /** @default a fresh `MemoryLedger` */
  ledger?: LedgerStore;
  /** @default a fresh counter */
  calls?: Record<string, number>;
  /** Awaited by every MCP call (by `tool:query`) once counted, before it answers. @default none */
  hold?: (key: string) => Promise<void>;
}

/**
 * Builds the lab runtime with `createTestGovernance` (in-memory ledger unless shared, CAS and grants;
 * a manual clock).
 * @param policy the permission policy
 * @param replica the session state and call counter, when several replicas share them
 */
export async function createLabRuntime(
  policy: PermissionPolicy = {},
  replica: LabReplica = {},
): Promise<LabRuntime> {
  const calls = replica.calls ?? {};
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  const registered = new Map<string, RegisteredTool>();
  for (const name of ["write", "delete", "search"]) {
    const tool = server.registerTool(
      name,
      {
        description: `The ${name} tool.`,
        inputSchema: { query: z.string(), limit: z.number().int().optional() },
      },
      async ({ query }) => {
        const key = `${name}:${query}`;
        calls[key] = (calls[key] ?? 0) + 1;
        await replica.hold?.(key);
        const result = demoResult(name, [query.replace(/\W/g, "") || "x"], { sourceId: "lab" });
        return {
          content: [{ type: "text", text: JSON.stringify(result) }],
          structuredContent: result as never,
        };
      },
    );
    registered.set(name, tool);
  }
  const search = makeTool({ id: "search", routing: { keywords: [], mode: "off", priority: 0 } });
  const t = await createTestGovernance({
    servers: { lab: server },
    manifests: [makeSource({ id: "lab", tools: [dangerous("write"), dangerous("delete"), search] })],
    clock: new ManualClock(),
    permissions: { policy: policy },
    storage: { sessionState: replica.sessionState, ...(replica.ledger ? { ledger: replica.ledger } : {}) },
  });
  const { governance, clock } = t;
  return {
    governance,
    clock,
    calls,
    close: t.close,
    async changeDescription(tool, description) {
      registered.get(tool)?.update({ description });
      await governance.refresh();
    },
  };
}

/** One lab call of a model turn. */
export type LabCall = { tool: "write" | "delete" | "search"; query: string; id?: string };

/**
 * A governed agent whose model loads the lab tools, makes `turns` of parallel calls, then answers.
 * @param rt the runtime
 * @param turns the calls of each tool-calling turn
 * @param approvalHook @default the agent's default (the approval gate)
 */
export function labAgent(rt: LabRuntime, turns: LabCall[][], approvalHook?: ApprovalHook) {
  const model = new RecordingChatModel([
    callTools({
      name: "tool_search",
      args: { query: "select:mcp__lab__write,mcp__lab__delete,mcp__lab__search" },
    }),
    ...turns.map((calls) =>
      callTools(
        ...calls.map((c) => ({
          name: `mcp__lab__${c.tool}`,
          args: { query: c.query },
          ...(c.id ? { id: c.id } : {}),
        })),
      ),
    ),
    answer("done"),
  ]);
  return createGovernedAgent({
    model,
    governance: rt.governance,
    checkpointer: new MemorySaver(),
    ...(approvalHook ? { approvalHook } : {}),
  });
}

/** The thread config. */
export const thread = (id: string) => ({ configurable: { thread_id: id } });

/**
 * The approval cards of a graph result, each as its native `PermissionCard` whatever shape it was
 * raised in (an `hitl` card, the default, carries it under `sciencegate`).
 */
export const interruptsOf = (values: unknown): Interrupt<PermissionCard>[] =>
  isInterrupted(values)
    ? (values[INTERRUPT] as Interrupt<PermissionCard | ApprovalHitlRequest>[]).map(
        (raised): Interrupt<PermissionCard> => {
          const { value } = raised;
          return value !== undefined && "sciencegate" in value
            ? { ...raised, value: value.sciencegate }
            : (raised as Interrupt<PermissionCard>);
        },
      )
    : [];

/** The card of a call (by its query). */
export function cardFor(values: unknown, query: string): Interrupt<PermissionCard> {
  const found = interruptsOf(values).find((i) => i.value?.args.query === query);
  if (!found) throw new Error(`no card for ${query}`);
  return found;
}

/** A resume command answering the given cards. */
export function resume(answers: Array<[Interrupt<PermissionCard>, unknown]>): LabInput {
  return new Command({ resume: Object.fromEntries(answers.map(([i, value]) => [i.id, value])) }) as LabInput;
}

/** What a lab agent's `invoke` takes. */
export type LabInput = Parameters<ReturnType<typeof labAgent>["invoke"]>[0];

/** A resume that answers nothing: tasks re-run and settle what they can (grants, always_allow, timeouts). */
export const resumeNothing = (): LabInput => new Command({ resume: {} }) as LabInput;

/** The tool messages of a graph result, by query of their call. */
export function toolResults(values: { messages: unknown[] }): Map<string, ToolMessage> {
  const messages = values.messages.filter((m): m is ToolMessage => ToolMessageClass.isInstance(m));
  const byQuery = new Map<string, ToolMessage>();
  const calls = values.messages.flatMap(
    (m) => (m as { tool_calls?: Array<{ id: string; args: { query?: string } }> }).tool_calls ?? [],
  );
  for (const message of messages) {
    const call = calls.find((c) => c.id === message.tool_call_id);
    if (call?.args.query !== undefined) byQuery.set(call.args.query, message);
  }
  return byQuery;
}

/** An error message's JSON body, or a result message's full result (its `artifact`, for code). */
export const bodyOf = (message: ToolMessage | undefined) =>
  message?.status === "error"
    ? JSON.parse(String(message.content))
    : (message?.artifact as { result: Record<string, unknown> } | undefined)?.result;

/**
 * Registers an `afterEach` that closes the runtime a test opened, and returns the opener.
 * @returns `lab(policy?)`, a {@link createLabRuntime} whose governance is closed after the test
 */
export function labRuntimes(): (...args: Parameters<typeof createLabRuntime>) => Promise<LabRuntime> {
  let open: LabRuntime | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  return async (...args) => {
    const rt = await createLabRuntime(...args);
    open = rt;
    return rt;
  };
}

/** The user turn that starts every lab run. */
export const go = { messages: [new HumanMessage("go")] };

/** The `decisionSource` of every authorization row, in order. */
export const decisionSources = async (rt: LabRuntime) =>
  (await rt.governance.ledger.listAuthorizations()).map((a) => a.decisionSource);
