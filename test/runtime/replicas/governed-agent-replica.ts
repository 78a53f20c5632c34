/**
 * One replica for `cross-process-approvals.replicas.test.ts`: a Node process that serves a governed
 * agent as a deployed server does. Its governance runtime is `createGovernance({ storage: { postgres }
 * })` opened once per process by `governanceForProcess`; the `lab` source is a real `McpServer` in this
 * process (in-memory pool) whose `write` (dangerous) and `search` (safe) tools make one HTTP request
 * to the test's loopback counter before they answer; the graph is `createGovernedAgent` over a
 * `PostgresSaver` on the same database, built per run with a scripted model whose messages carry
 * explicit ids (ids must not collide across processes sharing a thread).
 *
 * Protocol: one JSON command per stdin line, one JSON reply per stdout line with the same `id`
 * (`{id, ok: true, ...}` or `{id, ok: false, error}`); `{ready: true}` first, once the runtime is
 * open. Each command starts when its line arrives, so a test may run two at once. `close` closes the
 * runtime and the checkpointer; the process then exits on its own (exit code 0 when nothing is left).
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, isInterrupted } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { createGovernedAgent } from "../../../src/adapters/create-governed-agent.js";
import { isGovernanceError } from "../../../src/core/index.js";
import { createAuthorizationRequest } from "../../../src/governance/permissions/index.js";
import type { ApprovalCardFormat } from "../../../src/nodes/hitl-protocol.js";
import { createGovernance, governanceForProcess } from "../../../src/runtime/index.js";
import { createInMemoryPool } from "../../../src/testing/in-memory-pool.js";
import { demoResult } from "../../governance/broker/broker-harness.js";
import { RecordingChatModel } from "../../nodes/recording-chat-model.js";

/** How a replica is started (argv[2], JSON). */
export interface ReplicaPlan {
  replica: string;
  /** The shared database (governance stores and checkpointer). */
  url: string;
  /** The loopback counter every tool call reports to. */
  counterUrl: string;
  /** The shared manifest folder (the `lab` source). */
  manifestDir: string;
  /** The shared data directory (the file CAS). */
  dataDir: string;
}

/** One scripted model reply: tool calls, or a final text; `id` is the message id. */
export interface ReplySpec {
  id: string;
  calls?: Array<{ name: string; args: Record<string, unknown>; id: string }>;
  text?: string;
}

/** A broker call as the test writes it. */
export interface CallSpec {
  sourceId: string;
  toolId: string;
  input: Record<string, unknown>;
  sessionId: string;
  threadId?: string;
  toolCallId?: string;
}

/** The commands a replica answers. */
export type ReplicaCommand =
  | {
      cmd: "run";
      thread: string;
      /** A user turn, or a resume map keyed by interrupt id. */
      input: { user: string } | { resume: Record<string, unknown> };
      replies: ReplySpec[];
      cardFormat?: ApprovalCardFormat;
    }
  | { cmd: "threadState"; thread: string }
  | { cmd: "decide"; call: CallSpec; decision: unknown }
  | { cmd: "mode"; session: string; mode: "ask_for_dangerous" | "always_allow" }
  | { cmd: "source"; session: string; sourceId: string; enabled: boolean }
  | { cmd: "broker"; call: CallSpec }
  | { cmd: "state"; session: string; threadId?: string }
  | { cmd: "close" };

/** A card as the replica saw it. */
export interface SeenInterrupt {
  id: string;
  value: Record<string, unknown>;
}

/** A tool message of a run. */
export interface SeenToolMessage {
  toolCallId: string;
  name: string | undefined;
  status: string | undefined;
  content: string;
}

const plan = JSON.parse(process.argv[2] ?? "{}") as ReplicaPlan;

/** The lab server: every call is one request to the counter, so the test counts runs across processes. */
function labServer(): McpServer {
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  for (const name of ["write", "search"]) {
    server.registerTool(
      name,
      {
        description: `The ${name} tool.`,
        inputSchema: { query: z.string(), limit: z.number().int().optional() },
      },
      async ({ query }) => {
        const key = encodeURIComponent(`${name}:${query}`);
        const response = await fetch(`${plan.counterUrl}/hit?key=${key}&replica=${plan.replica}`);
        await response.text();
        const result = demoResult(name, [query.replace(/\W/g, "") || "x"], { sourceId: "lab" });
        return {
          content: [{ type: "text", text: JSON.stringify(result) }],
          structuredContent: result as never,
        };
      },
    );
  }
  return server;
}

const governance = governanceForProcess(() =>
  createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [plan.manifestDir] },
    mcp: { pool: createInMemoryPool({ lab: labServer }) },
    storage: { postgres: plan.url, maxConnections: 4, dataDir: plan.dataDir },
    env: {},
  }),
);
const checkpointer = PostgresSaver.fromConnString(plan.url);

function modelOf(replies: ReplySpec[]): RecordingChatModel {
  return new RecordingChatModel(
    replies.map(
      (reply) =>
        new AIMessage({
          id: reply.id,
          content: reply.text ?? "",
          tool_calls: (reply.calls ?? []).map((call) => ({ ...call, type: "tool_call" as const })),
        }),
    ),
  );
}

const config = (thread: string) => ({ configurable: { thread_id: thread } });

async function run(command: Extract<ReplicaCommand, { cmd: "run" }>) {
  const model = modelOf(command.replies);
  // As on the LangGraph API server: the graph is built per run over the process's runtime.
  const graph = createGovernedAgent({
    model,
    governance: await governance(),
    checkpointer,
    promotionScope: "thread",
    ...(command.cardFormat ? { cardFormat: command.cardFormat } : {}),
  });
  const input =
    "user" in command.input
      ? {
          messages: [
            new HumanMessage({ id: `human-${command.thread}-${Date.now()}`, content: command.input.user }),
          ],
        }
      : (new Command({ resume: command.input.resume }) as never);
  const values = await graph.invoke(input, config(command.thread));
  const interrupts = isInterrupted(values) ? (values[INTERRUPT] as SeenInterrupt[]) : [];
  const tools: SeenToolMessage[] = values.messages
    .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    .map((m) => ({ toolCallId: m.tool_call_id, name: m.name, status: m.status, content: String(m.content) }));
  return {
    interrupts: interrupts.map((i) => ({ id: i.id, value: i.value })),
    tools,
    messageIds: values.messages.map((m) => m.id),
    boundTools: model.turns.map((_, turn) => model.toolNames(turn)),
    modelTurns: model.turns.length,
  };
}

async function threadState(thread: string) {
  const graph = createGovernedAgent({ model: modelOf([]), governance: await governance(), checkpointer });
  const state = await graph.getState(config(thread));
  return {
    next: state.next,
    interrupts: state.tasks.flatMap((task) => task.interrupts.map((i) => ({ id: i.id, value: i.value }))),
  };
}

async function brokerCall(call: CallSpec) {
  const { broker } = await governance();
  try {
    const outcome = await broker.invoke(call);
    return { outcome: "ran", invocationId: outcome.invocationId, replayed: outcome.replayed };
  } catch (error) {
    return { outcome: isGovernanceError(error) ? error.code : String(error) };
  }
}

async function state(session: string, threadId: string | undefined) {
  const g = await governance();
  return {
    approvalMode: g.permissions.approvalMode(session),
    surface: g.tools(session).map((t) => t.name),
    grants: (await g.permissions.listGrants({ sessionId: session })).map((grant) => grant.resource),
    invocations: threadId === undefined ? [] : await g.ledger.query({ threadId, order: "asc" }),
    authorizations: await g.ledger.listAuthorizations({ sessionId: session }),
  };
}

async function handle(command: ReplicaCommand): Promise<object> {
  switch (command.cmd) {
    case "run":
      return run(command);
    case "threadState":
      return threadState(command.thread);
    case "decide": {
      const g = await governance();
      const request = createAuthorizationRequest(g.catalog, command.call);
      return { decided: await g.permissions.decide(request, command.decision) };
    }
    case "mode":
      await (await governance()).permissions.setApprovalMode(command.session, command.mode);
      return {};
    case "source": {
      const { sessions } = await governance();
      await (command.enabled
        ? sessions.enableSource(command.session, command.sourceId)
        : sessions.disableSource(command.session, command.sourceId));
      return {};
    }
    case "broker":
      return brokerCall(command.call);
    case "state":
      return state(command.session, command.threadId);
    case "close":
      await governance.close();
      await checkpointer.end();
      return {};
  }
}

const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

await governance(); // opened before `ready`: the first command does not pay for it
say({ ready: true });

let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += String(chunk);
  for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
    const { id, ...command } = JSON.parse(buffered.slice(0, nl)) as ReplicaCommand & { id: number };
    buffered = buffered.slice(nl + 1);
    handle(command as ReplicaCommand).then(
      (reply) => {
        say({ id, ok: true, ...reply });
        if (command.cmd === "close") process.stdin.destroy();
      },
      (error: unknown) => say({ id, ok: false, error: error instanceof Error ? error.stack : String(error) }),
    );
  }
});
