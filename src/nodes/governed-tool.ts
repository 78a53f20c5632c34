/**
 * The one governed LangChain tool. Every executor binds these: the model node and the middleware to
 * show the model `tool_search` and its promoted tools, the fixed tool table to run them in a runner
 * that binds its tools once (a swarm agent, a prebuilt `ToolNode`). Each is a `StructuredTool` whose
 * schema is the governed tool's JSON Schema and whose execution is handed to a runner (an executor's
 * `GovernedCallRunner`). It exists because LangChain validates JSON-Schema input itself and throws an
 * unstructured `ToolInputParsingException`; a governed call must instead reach the broker, which
 * validates, answers `INVALID_INPUT` with the failing field and writes the ledger row.
 */
import type { CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import type { ToolMessage } from "@langchain/core/messages";
import { StructuredTool, type ToolRunnableConfig } from "@langchain/core/tools";
import { type JSONSchema, toJsonSchema } from "@langchain/core/utils/json_schema";
import { createToolSearchTool, type SurfaceTool, TOOL_SEARCH_NAME } from "../visibility/index.js";
import type { ToolCallLike } from "./execute-tool-call.js";

/** Runs one call of the tool and returns the message for the model (never throws for tool failures). */
export type GovernedToolRunner = (
  call: ToolCallLike,
  config: ToolRunnableConfig | undefined,
) => Promise<ToolMessage>;

/** Fields of `GovernedStructuredTool`. */
export interface GovernedStructuredToolFields {
  name: string;
  description: string;
  /** JSON Schema of the arguments, bound to the model as it is. */
  schema: Record<string, unknown>;
  run: GovernedToolRunner;
}

/**
 * A tool that binds a JSON Schema and delegates execution, input validation included, to `run`.
 * Invoked with a tool call it returns the runner's `ToolMessage`; with plain arguments, the
 * message's content.
 */
export class GovernedStructuredTool extends StructuredTool {
  override name: string;
  override description: string;
  override schema: JSONSchema;
  readonly #run: GovernedToolRunner;

  /** @param fields name, description, schema and the runner */
  constructor(fields: GovernedStructuredToolFields) {
    super();
    this.name = fields.name;
    this.description = fields.description;
    this.schema = fields.schema as JSONSchema;
    this.#run = fields.run;
  }

  /**
   * Runs the call through the runner, skipping LangChain's own schema check (the broker's is the
   * one that counts, and it is audited).
   * @param input a tool call `{type: "tool_call", id, name, args}` or the plain arguments
   * @param config the runnable config (thread id, abort signal)
   * @returns the `ToolMessage` for a tool call, else its content
   */
  // biome-ignore lint/suspicious/noExplicitAny: the base signature's return type is a conditional over its generics
  override async invoke(input: unknown, config?: ToolRunnableConfig): Promise<any> {
    const isCall = isToolCall(input);
    const call: ToolCallLike = isCall
      ? { id: input.id, name: this.name, args: input.args }
      : { name: this.name, args: (input ?? {}) as Record<string, unknown> };
    if (call.id === undefined && config?.toolCall?.id !== undefined) call.id = config.toolCall.id;
    const message = await this.#run(call, config);
    return isCall ? message : message.content;
  }

  /** Runs plain arguments through the runner (LangChain's hook, reached only through the base class). */
  protected override async _call(
    args: Record<string, unknown>,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<unknown> {
    return (await this.#run({ name: this.name, args }, config)).content;
  }
}

/** `tool_search` as the visibility layer defines it: its description and schema do not depend on the tools. */
const toolSearch = createToolSearchTool({ getTools: () => [] });
const toolSearchSchema = toJsonSchema(toolSearch.schema) as Record<string, unknown>;

/**
 * The governed tools of a turn or a table: `tool_search` first, then each given tool with its
 * model-visible name, composed description and input schema, all run by `run`.
 * @param tools the surface tools to offer (the promoted ones, or a fixed table's)
 * @param run the runner that executes a call of any of them
 * @returns `[tool_search, ...tools]`, bindable to any chat model and runnable in any tool runner
 * @example
 * const [search, ...promoted] = governedTools(visibleDeferredTools, (call, config) => runner.message(call, config));
 */
export function governedTools(
  tools: readonly SurfaceTool[],
  run: GovernedToolRunner,
): [GovernedStructuredTool, ...GovernedStructuredTool[]] {
  return [
    new GovernedStructuredTool({
      name: TOOL_SEARCH_NAME,
      description: toolSearch.description,
      schema: toolSearchSchema,
      run,
    }),
    ...tools.map(
      (tool) =>
        new GovernedStructuredTool({
          name: tool.name,
          description: tool.description,
          schema: tool.inputSchema,
          run,
        }),
    ),
  ];
}

interface ToolCallInput {
  type: "tool_call";
  id?: string | undefined;
  args: Record<string, unknown>;
}

function isToolCall(input: unknown): input is ToolCallInput {
  return (
    typeof input === "object" &&
    input !== null &&
    "type" in input &&
    input.type === "tool_call" &&
    "args" in input &&
    typeof input.args === "object"
  );
}
