/**
 * The five executors a user runs governed tools in, each over a real `@modelcontextprotocol/server-
 * filesystem` child process: a hand-wired `StateGraph` with the node set, `createGovernedAgent`,
 * langchain's `createAgent` with `governanceMiddleware`, a swarm of `createReactAgent`s over the fixed
 * tool table, and a prebuilt `ToolNode` over the same table. Every model is scripted: it selects
 * `write_file` with `tool_search`, then writes three files in parallel, then answers.
 */
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import {
  type BaseCheckpointSaver,
  type Command,
  END,
  INTERRUPT,
  type Interrupt,
  isInterrupted,
  MemorySaver,
  MessagesAnnotation,
  Send,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { createAgent } from "langchain";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { prepareFixedToolTable } from "../../src/adapters/fixed-tool-table.js";
import { governanceMiddleware } from "../../src/adapters/governance-middleware.js";
import type { PermissionCard } from "../../src/governance/permissions/index.js";
import type {
  ApprovalCardFormat,
  ApprovalHitlRequest,
  ApprovalInterruptValue,
  SessionIdResolver,
} from "../../src/nodes/index.js";
import {
  createGovernedToolNode,
  createModelNode,
  GOVERNED_TOOLS_NODE,
  GovernedStateAnnotation,
  governedToolsCondition,
} from "../../src/nodes/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { serverConfig } from "../mcp/server-configs.js";
import { RecordingModel } from "./recording-model.js";

const filesystemServer = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

/** The model-visible name of the server's `write_file`. */
export const WRITE_FILE = "mcp__filesystem__write_file";

/** A governance runtime over a real filesystem server rooted at `root` (default: a fresh temporary directory). */
export async function filesystemGovernance(
  options: { root?: string; dataDir?: string } = {},
): Promise<{ governance: Governance; root: string }> {
  const root = options.root ?? (await realpath(await mkdtemp(join(tmpdir(), "sciencegate-fs-"))));
  const governance = await createGovernance({
    config: {
      servers: [
        serverConfig({
          id: "filesystem",
          transport: "stdio",
          command: process.execPath,
          args: [filesystemServer, root],
        }),
      ],
    },
    manifests: { builtin: false, dirs: [] },
    storage: { dataDir: options.dataDir ?? (await mkdtemp(join(tmpdir(), "sciencegate-fs-data-"))) },
  });
  return { governance, root };
}

/** One executor: its name and how a test drives it. */
export interface Executor {
  name: string;
  /**
   * Starts a run with the user's message (`"start"`: the default one), or resumes one with a
   * `Command`, in thread `threadId` (with more `configurable` fields when given).
   */
  invoke(
    input: "start" | { say: string } | Command,
    threadId: string,
    configurable?: Record<string, unknown>,
  ): Promise<ExecutorState>;
}

/** What an executor run returns that the tests read. */
export interface ExecutorState {
  messages: BaseMessage[];
  [INTERRUPT]?: Interrupt<PermissionCard>[];
}

/** The scripted turns: select `write_file`, write the three files at once, then answer. */
export function writerModel(root: string, files: readonly string[], idPrefix = "m"): RecordingModel {
  return new RecordingModel()
    .respond(
      new AIMessage({
        id: `${idPrefix}-1`,
        content: "",
        tool_calls: [{ id: "search-1", name: "tool_search", args: { query: `select:${WRITE_FILE}` } }],
      }),
    )
    .respond(
      new AIMessage({
        id: `${idPrefix}-2`,
        content: "",
        tool_calls: files.map((file, i) => ({
          id: `write-${i + 1}`,
          name: WRITE_FILE,
          args: { path: join(root, file), content: `content of ${file}` },
        })),
      }),
    )
    .respond(new AIMessage({ id: `${idPrefix}-3`, content: "done" }));
}

const userTurn = (text = "Write the three notes.") => ({ messages: [new HumanMessage(text)] });
const threadConfig = (threadId: string, more: Record<string, unknown> = {}) => ({
  configurable: { ...more, thread_id: threadId },
});

// biome-ignore lint/suspicious/noExplicitAny: each executor has its own input and state types
type AnyGraph = { invoke(input: any, config: any): Promise<any> };

function executor(name: string, graph: AnyGraph): Executor {
  return {
    name,
    invoke: async (input, threadId, configurable) =>
      (await graph.invoke(
        input === "start" ? userTurn() : "say" in input ? userTurn(input.say) : input,
        threadConfig(threadId, configurable),
      )) as ExecutorState,
  };
}

/** The names of the five executors, in the order of {@link buildExecutor}. */
export const EXECUTOR_NAMES = [
  "StateGraph node set",
  "createGovernedAgent",
  "createAgent + governanceMiddleware",
  "swarm (createReactAgent v2 over the fixed tool table)",
  "prebuilt ToolNode over the fixed tool table",
] as const;

/** What every executor is given the same way: the card format and the session resolver. */
export interface ExecutorOptions {
  cardFormat?: ApprovalCardFormat;
  sessionId?: SessionIdResolver;
}

/**
 * Builds one executor over the runtime, with the given checkpointer. Each is built once, as an app
 * builds it, and serves every thread it is invoked with.
 * @param name one of {@link EXECUTOR_NAMES}
 * @param governance the runtime
 * @param model the scripted model
 * @param checkpointer where the threads live
 * @param options the card format and session resolver, given to every part of the executor
 */
export function buildExecutor(
  name: (typeof EXECUTOR_NAMES)[number],
  governance: Governance,
  model: BaseChatModel,
  checkpointer: BaseCheckpointSaver | false = new MemorySaver(),
  options: ExecutorOptions = {},
): Executor {
  const saver = checkpointer === false ? {} : { checkpointer };
  switch (name) {
    case "StateGraph node set": {
      const graph = new StateGraph(GovernedStateAnnotation)
        .addNode("agent", createModelNode({ model, governance, ...options }))
        .addNode(GOVERNED_TOOLS_NODE, createGovernedToolNode({ governance, ...options }))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", governedToolsCondition, [GOVERNED_TOOLS_NODE, END])
        .addEdge(GOVERNED_TOOLS_NODE, "agent")
        .compile(saver);
      return executor(name, graph);
    }
    case "createGovernedAgent":
      return executor(name, createGovernedAgent({ model, governance, ...saver, ...options }));
    case "createAgent + governanceMiddleware":
      return executor(
        name,
        createAgent({
          model,
          tools: [],
          middleware: [governanceMiddleware({ governance, ...options })],
          ...saver,
        }),
      );
    case "swarm (createReactAgent v2 over the fixed tool table)": {
      const table = prepareFixedToolTable({ governance, ...options });
      const writer = createReactAgent({
        llm: model,
        tools: [...table, createHandoffTool({ agentName: "reviewer" })],
        name: "writer",
        version: "v2",
      });
      const reviewer = createReactAgent({
        llm: new RecordingModel().respond(new AIMessage({ id: "reviewer-1", content: "ok" })),
        tools: [createHandoffTool({ agentName: "writer" })],
        name: "reviewer",
      });
      return executor(
        name,
        createSwarm({ agents: [writer, reviewer], defaultActiveAgent: "writer" }).compile(saver),
      );
    }
    case "prebuilt ToolNode over the fixed tool table": {
      const table = prepareFixedToolTable({ governance, ...options });
      const bound = model.bindTools!(table);
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
        .addNode("tools", new ToolNode(table))
        .addEdge(START, "agent")
        // One task per tool call, so each dangerous call gets its own card.
        .addConditionalEdges(
          "agent",
          (state) => {
            const last = state.messages.at(-1) as AIMessage | undefined;
            const calls = last?.tool_calls ?? [];
            if (calls.length === 0) return END;
            return calls.map(
              (call) => new Send("tools", { ...state, messages: [last as AIMessage], lg_tool_call: call }),
            );
          },
          ["tools", END],
        )
        .addEdge("tools", "agent")
        .compile(saver);
      return executor(name, graph);
    }
  }
}

/** The interrupts of a paused run, as raised (a native card or an `hitl` request). */
export function interruptsOf(state: unknown): Interrupt<ApprovalInterruptValue | ApprovalHitlRequest>[] {
  return isInterrupted(state)
    ? (state[INTERRUPT] as Interrupt<ApprovalInterruptValue | ApprovalHitlRequest>[])
    : [];
}

/** The approval cards of a paused run, in the native shape whatever the format they were raised in. */
export function cardsOf(state: unknown): Interrupt<PermissionCard>[] {
  return interruptsOf(state).map(({ id, value }) => ({
    ...(id === undefined ? {} : { id }),
    ...(value === undefined ? {} : { value: "sciencegate" in value ? value.sciencegate : value }),
  }));
}

/** The interrupt id of the card of the call writing `file`. */
export function cardForFile(state: unknown, file: string): string {
  const card = cardsOf(state).find((c) => String(c.value?.args?.path ?? "").endsWith(`/${file}`));
  if (card?.id === undefined) throw new Error(`no card for ${file}`);
  return card.id;
}

/** The tool messages of a run, by tool call id. */
export function toolMessagesById(state: ExecutorState): Map<string, ToolMessage> {
  const found = new Map<string, ToolMessage>();
  for (const message of state.messages) {
    if (ToolMessage.isInstance(message)) found.set(message.tool_call_id, message);
  }
  return found;
}
