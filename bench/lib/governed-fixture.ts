import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import {
  type BaseCheckpointSaver,
  END,
  type LangGraphRunnableConfig,
  MemorySaver,
  MessagesAnnotation,
  Send,
  START,
  StateGraph,
} from "@langchain/langgraph";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  createGovernance,
  createGovernedToolNode,
  type Governance,
  GovernedStateAnnotation,
  governanceMiddleware,
  governedToolsCondition,
  prepareFixedToolTable,
} from "../../src/index.js";
import type { GovernedToolTask } from "../../src/nodes/index.js";
import { toolMessageContent } from "../../src/nodes/tool-message-content.js";
import { type PromotionState, promote, promotionReducer } from "../../src/visibility/index.js";
import { openTestPostgres, type TestPostgres } from "../../test/postgres/test-postgres.js";
import { extensionsConfig, type SdkClient, startUserServers, type UserServer } from "./user-servers.js";

/** A tool call as a model emits it. */
interface ModelToolCall {
  type: "tool_call";
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One executor path: call it with a call index, it throws unless the tool answered normally. */
export type Executor = (index: number) => Promise<unknown>;

/** Everything the benchmark drives; `close()` stops every child process and server. */
export interface GovernedFixture {
  trivial: UserServer;
  sources: UserServer;
  /** Raw SDK clients, each on its own child of the server. */
  sdk: { trivial: SdkClient; sources: SdkClient };
  /** The SQLite runtime (both servers configured). */
  sqlite: Governance;
  /** The PostgreSQL runtime (the trivial server only), or why there is none. */
  postgres: { governance: Governance; url: string } | { skipped: string };
  /** The executors on the SQLite runtime, calling the trivial tool. */
  executors: {
    table: Executor;
    middleware: Executor;
    graph: Executor;
    graphCheckpointed: Executor;
    /** Baselines: the same graphs with a node that calls the SDK directly. */
    rawGraph: Executor;
    rawGraphCheckpointed: Executor;
    /**
     * Breakdown: the SDK node in the governed graph's shape (`GovernedStateAnnotation`, routed by
     * `governedToolsCondition`, the promotion in the input): minus the raw graph, what the state schema costs.
     */
    schemaGraph: Executor;
    schemaGraphCheckpointed: Executor;
    /**
     * Breakdown: the same governed-shape graph whose node calls `governance.broker.invoke` itself with
     * the request the tool node makes (session = thread, `threadId:toolCallId`, the task's signal) and
     * builds the same ToolMessage: the runtime inside a graph task, without the tool node around it.
     */
    brokerGraph: Executor;
    brokerGraphCheckpointed: Executor;
  };
  /** Governed calls each runtime has been asked to make (checked against its ledger). */
  calls: { sqlite: number; postgres: number };
  close(): Promise<void>;
}

function toolCall(server: UserServer, index: number, prefix: string): ModelToolCall {
  return { type: "tool_call", id: `${prefix}-${index}`, name: server.modelName, args: server.args(index) };
}

function checkMessage(message: unknown): void {
  if (!ToolMessage.isInstance(message) || message.status === "error") {
    const text = ToolMessage.isInstance(message) ? String(message.content) : JSON.stringify(message);
    throw new Error(`The executor answered an error: ${text.slice(0, 300)}`);
  }
}

function lastToolMessage(state: { messages: BaseMessage[] }): void {
  checkMessage(state.messages.at(-1));
}

/** A node input routed by `Send`: one tool call. */
interface RawTask {
  toolCall: ModelToolCall;
}

/** A graph without Sciencegate: one node per tool call (via `Send`) that calls the MCP SDK directly. */
function rawGraph(sdk: SdkClient, server: UserServer, checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("tools", async (task: RawTask) => {
      const { toolCall } = task;
      const result = (await sdk.client.callTool({
        name: server.mcpToolName,
        arguments: toolCall.args,
      })) as CallToolResult;
      server.check(result);
      const [first] = result.content;
      const content = first?.type === "text" ? first.text : JSON.stringify(result.content);
      return { messages: [new ToolMessage({ tool_call_id: toolCall.id, name: toolCall.name, content })] };
    })
    .addConditionalEdges(START, (state) => {
      const last = state.messages.at(-1) as AIMessage;
      return (last.tool_calls ?? []).map((call) => new Send("tools", { toolCall: call }));
    })
    .addEdge("tools", END)
    .compile(checkpointer ? { checkpointer } : {});
}

/**
 * The SDK node of `rawGraph` in the governed graph's shape: the state schema's cost, without Sciencegate's
 * node or runtime.
 */
function schemaGraph(sdk: SdkClient, server: UserServer, checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(GovernedStateAnnotation)
    .addNode("tools", async (task: GovernedToolTask) => {
      const { toolCall } = task;
      const result = (await sdk.client.callTool({
        name: server.mcpToolName,
        arguments: toolCall.args,
      })) as CallToolResult;
      server.check(result);
      const [first] = result.content;
      const content = first?.type === "text" ? first.text : JSON.stringify(result.content);
      return {
        messages: [new ToolMessage({ tool_call_id: toolCall.id ?? "", name: toolCall.name, content })],
      };
    })
    .addConditionalEdges(START, governedToolsCondition)
    .addEdge("tools", END)
    .compile(checkpointer ? { checkpointer } : {});
}

/**
 * The governed graph's shape with a node that calls the runtime directly: the request and the
 * ToolMessage (text and artifact) of the tool node, without its lookup, approval step and spans.
 */
function brokerGraph(governance: Governance, server: UserServer, checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(GovernedStateAnnotation)
    .addNode("tools", async (task: GovernedToolTask, config: LangGraphRunnableConfig) => {
      const { toolCall } = task;
      const threadId = String(config.configurable?.thread_id);
      const outcome = await governance.broker.invoke({
        sourceId: server.sourceId,
        toolId: server.toolId,
        input: toolCall.args,
        sessionId: threadId,
        threadId,
        toolCallId: toolCall.id ?? "",
        ...(config.signal ? { signal: config.signal } : {}),
      });
      const content = toolMessageContent(outcome.invocationId, outcome.result);
      const message = new ToolMessage({
        tool_call_id: toolCall.id ?? "",
        name: toolCall.name,
        content,
        artifact: outcome,
      });
      return { messages: [message] };
    })
    .addConditionalEdges(START, governedToolsCondition)
    .addEdge("tools", END)
    .compile(checkpointer ? { checkpointer } : {});
}

/** The same graph with Sciencegate's governed tool node. */
function governedGraph(governance: Governance, checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(GovernedStateAnnotation)
    .addNode("tools", createGovernedToolNode({ governance }))
    .addConditionalEdges(START, governedToolsCondition)
    .addEdge("tools", END)
    .compile(checkpointer ? { checkpointer } : {});
}

/**
 * Starts the servers, the clients, both runtimes and the executors.
 * @param options whether to start PostgreSQL
 * @returns the fixture
 * @throws Error when a server does not start or a runtime does not offer the bench tools
 */
export async function createGovernedFixture(options: { postgres: boolean }): Promise<GovernedFixture> {
  const bench = await startUserServers("sciencegate-bench-governed-", "bench-sdk");
  const { scratch, manifests, trivial, sources } = bench;
  const { trivial: sdkTrivial, sources: sdkSources } = bench.direct;
  const close = bench.close;
  try {
    // An environment without SCIENCEGATE_* variables, so that the shell cannot move a runtime elsewhere.
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const common = { manifests: { dirs: [manifests] }, env, mcp: { failOnError: true } };
    const sqlite = await createGovernance({
      ...common,
      config: extensionsConfig([trivial, sources.server]),
      storage: { dataDir: join(scratch, "sqlite-data") },
    });
    bench.onClose(() => sqlite.close());

    let postgres: GovernedFixture["postgres"] = { skipped: "not asked for" };
    if (options.postgres) {
      let server: TestPostgres | undefined;
      try {
        server = await openTestPostgres();
      } catch (error) {
        postgres = { skipped: `PostgreSQL did not start: ${(error as Error).message}` };
      }
      if (server) {
        const started = server;
        bench.onClose(() => started.stop());
        const url = await started.createDatabase();
        const governance = await createGovernance({
          ...common,
          config: extensionsConfig([trivial]),
          storage: { postgres: url, dataDir: join(scratch, "postgres-data") },
        });
        bench.onClose(() => governance.close());
        postgres = { governance, url };
      }
    }

    const calls = { sqlite: 0, postgres: 0 };
    const surface = sqlite.tools("default");
    if (
      !surface.some((t) => t.name === trivial.modelName) ||
      !surface.some((t) => t.name === sources.server.modelName)
    ) {
      throw new Error(`The runtime offers ${surface.map((t) => t.name).join(", ")}.`);
    }
    const promotion: PromotionState = promotionReducer(undefined, promote([trivial.modelName], surface));

    const table = prepareFixedToolTable({ governance: sqlite });
    const tableTool = table.find((t) => t.name === trivial.modelName) as StructuredToolInterface | undefined;
    if (!tableTool) throw new Error(`The fixed table has no ${trivial.modelName}.`);
    const middleware = governanceMiddleware({ governance: sqlite });
    const refuseHandler = () => {
      throw new Error("The middleware handed a governed call to the agent's own tool handler.");
    };
    const graph = governedGraph(sqlite);
    const graphCheckpointed = governedGraph(sqlite, new MemorySaver());
    const raw = rawGraph(sdkTrivial, trivial);
    const rawCheckpointed = rawGraph(sdkTrivial, trivial, new MemorySaver());
    const schema = schemaGraph(sdkTrivial, trivial);
    const schemaCheckpointed = schemaGraph(sdkTrivial, trivial, new MemorySaver());
    const broker = brokerGraph(sqlite, trivial);
    const brokerCheckpointed = brokerGraph(sqlite, trivial, new MemorySaver());
    // A fresh thread per graph run, so a checkpointed thread's state stays one turn long.
    const runGraph = (compiled: typeof graph, index: number, prefix: string, governed: boolean) => {
      const call = toolCall(trivial, index, prefix);
      const input = {
        messages: [new AIMessage({ content: "", tool_calls: [call] })],
        ...(governed ? { promotion: promote([trivial.modelName], surface) } : {}),
      };
      return compiled.invoke(input, { configurable: { thread_id: `${prefix}-${index}` } });
    };

    return {
      trivial,
      sources: sources.server,
      sdk: { trivial: sdkTrivial, sources: sdkSources },
      sqlite,
      postgres,
      calls,
      executors: {
        async table(index) {
          calls.sqlite++;
          const message = await tableTool.invoke(toolCall(trivial, index, "table"), {
            configurable: { thread_id: "bench-table" },
          });
          checkMessage(message);
        },
        async middleware(index) {
          calls.sqlite++;
          const message = await middleware.wrapToolCall(
            {
              toolCall: toolCall(trivial, index, "middleware"),
              tool: undefined,
              state: { messages: [], promotion },
              runtime: { configurable: { thread_id: "bench-middleware" } },
            },
            refuseHandler,
          );
          checkMessage(message);
        },
        async graph(index) {
          calls.sqlite++;
          lastToolMessage(await runGraph(graph, index, "graph", true));
        },
        async graphCheckpointed(index) {
          calls.sqlite++;
          lastToolMessage(await runGraph(graphCheckpointed, index, "graph-saver", true));
        },
        async rawGraph(index) {
          lastToolMessage(await runGraph(raw as unknown as typeof graph, index, "raw", false));
        },
        async rawGraphCheckpointed(index) {
          lastToolMessage(
            await runGraph(rawCheckpointed as unknown as typeof graph, index, "raw-saver", false),
          );
        },
        async schemaGraph(index) {
          lastToolMessage(await runGraph(schema, index, "schema", true));
        },
        async schemaGraphCheckpointed(index) {
          lastToolMessage(await runGraph(schemaCheckpointed, index, "schema-saver", true));
        },
        async brokerGraph(index) {
          calls.sqlite++;
          lastToolMessage(await runGraph(broker, index, "broker", true));
        },
        async brokerGraphCheckpointed(index) {
          calls.sqlite++;
          lastToolMessage(await runGraph(brokerCheckpointed, index, "broker-saver", true));
        },
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
